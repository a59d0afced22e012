// GPU Field Guide: the browser measurement suite. WebGPU kernels (WGSL) run in the reader's own
// browser; the results go back to this session's Python as one JSON document in the project's
// result schema (measure/results.py, schema 1, source "webgpu"). Nothing is sent anywhere else.
// Loaded by ui/webgpu.py as the JavaScript of one st.components.v2 component (no iframe).
//
// Timing: timestamp-query around a compute pass when the adapter offers it (Chrome quantizes it to
// 100 us unless its developer flag is on: the quantum is measured and reported), else wall time
// around queue.onSubmittedWorkDone(). Every sample lasts at least 100 quanta of its timer (< 1 %),
// two warm-ups run first, and median, p10, p90 and minimum are reported as `python -m measure` does.
// Every kernel checks its own result; a wrong result is an error, never a number.

const TOOL = "gpu-field-guide webgpu";
const MiB = 1 << 20;
const KiB = 1 << 10;
const LINE_BYTES = 128; // pointer chase: one u32 per 128-byte line, as the CUDA chase
const WORKGROUP = 256;
// A point whose p90 / p10 exceeds this is measured once more, then marked noisy (measure/webgpu_checks.py)
const NOISE_LIMIT = 2.0;
const G = (window.__gfgWebgpu = window.__gfgWebgpu || { running: false, seq: 0, options: {} });

// ---------------------------------------------------------------------------------------------
// Small helpers

class Stopped extends Error {
  constructor(code, message) {
    super(message);
    this.code = code;
  }
}

function percentile(sorted, q) {
  // numpy's default (linear) method, as measure/timing.py
  if (sorted.length === 1) return sorted[0];
  const pos = (q / 100) * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

function summarize(values) {
  const s = [...values].sort((a, b) => a - b);
  return { median: percentile(s, 50), p10: percentile(s, 10), p90: percentile(s, 90), min: s[0] };
}

function human(bytes) {
  if (bytes >= 1 << 30) return `${+(bytes / (1 << 30)).toPrecision(3)} GiB`;
  if (bytes >= MiB) return `${+(bytes / MiB).toPrecision(3)} MiB`;
  return `${+(bytes / KiB).toPrecision(3)} KiB`;
}

function num(value) {
  // Three significant figures without an exponent: 0.00444, 1,010, 23.7.
  return Number(Number(value).toPrecision(3)).toLocaleString("en-US", { maximumFractionDigits: 6 });
}

function flopsText(perSecond) {
  return perSecond >= 1e12 ? `${num(perSecond / 1e12)} TFLOP/s` : `${num(perSecond / 1e9)} GFLOP/s`;
}

function seconds(s) {
  // A duration in the unit that reads best: 1 ns, 100 µs, 4.2 ms.
  if (s < 1e-6) return `${num(s * 1e9)} ns`;
  if (s < 1e-3) return `${num(s * 1e6)} µs`;
  return `${num(s * 1e3)} ms`;
}

function gcdBig(a, b) {
  a = a < 0n ? -a : a;
  b = b < 0n ? -b : b;
  while (b) [a, b] = [b, a % b];
  return a;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------
// WGSL kernels

const PATTERN = /* wgsl */ `
fn pb(j: u32) -> f32 { return f32(j % 1021u) * 0.5; }
fn pc(j: u32) -> f32 { return f32((j * 7u) % 1019u) * 0.25 + 1.0; }
`;
const patternB = (j) => Math.fround((j % 1021) * 0.5);
const patternC = (j) => Math.fround(((j * 7) % 1019) * 0.25 + 1);
const TRIAD_SCALAR = 3;

const WGSL = {
  init: PATTERN + /* wgsl */ `
@group(0) @binding(0) var<storage, read_write> a: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read_write> b: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> c: array<vec4<f32>>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let n = arrayLength(&a);
  let stride = nwg.x * 256u;
  for (var i = gid.x; i < n; i = i + stride) {
    let j = i * 4u;
    b[i] = vec4<f32>(pb(j), pb(j + 1u), pb(j + 2u), pb(j + 3u));
    c[i] = vec4<f32>(pc(j), pc(j + 1u), pc(j + 2u), pc(j + 3u));
    a[i] = vec4<f32>(-1.0);
  }
}`,
  sentinel: /* wgsl */ `
@group(0) @binding(0) var<storage, read_write> a: array<vec4<f32>>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let n = arrayLength(&a);
  for (var i = gid.x; i < n; i = i + nwg.x * 256u) { a[i] = vec4<f32>(-1.0); }
}`,
  copy: /* wgsl */ `
@group(0) @binding(0) var<storage, read_write> a: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> b: array<vec4<f32>>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let n = arrayLength(&a);
  let stride = nwg.x * 256u;
  for (var i = gid.x; i < n; i = i + stride) { a[i] = b[i]; }
}`,
  triad: /* wgsl */ `
@group(0) @binding(0) var<storage, read_write> a: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> b: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> c: array<vec4<f32>>;
const S: f32 = 3.0;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let n = arrayLength(&a);
  let stride = nwg.x * 256u;
  for (var i = gid.x; i < n; i = i + stride) { a[i] = b[i] + S * c[i]; }
}`,
  // Counts, on the GPU, every element of `a` that differs from what the kernel should have written.
  check: PATTERN + /* wgsl */ `
struct Count { n: atomic<u32> }
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read_write> bad: Count;
@group(0) @binding(2) var<uniform> mode: vec4<u32>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let n = arrayLength(&a);
  for (var j = gid.x; j < n; j = j + nwg.x * 256u) {
    var want = pb(j);
    if (mode.x == 1u) { want = pb(j) + 3.0 * pc(j); }
    if (a[j] != want) { atomicAdd(&bad.n, 1u); }
  }
}`,
  empty: /* wgsl */ `
struct Count { n: atomic<u32> }
@group(0) @binding(0) var<storage, read_write> count: Count;
@compute @workgroup_size(1)
fn main() { atomicAdd(&count.n, 1u); }`,
  fma: (f16) => /* wgsl */ `
${f16 ? "enable f16;" : ""}
alias T = ${f16 ? "f16" : "f32"};
struct P { iters: u32, mul: f32, add: f32, pad: u32 }
@group(0) @binding(0) var<uniform> p: P;
@group(0) @binding(1) var<storage, read_write> out: array<vec4<f32>>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
  let base = T(gid.x % 64u);
  let x = vec4<T>(base, base + T(1.0), base + T(2.0), base + T(3.0));
  var x0 = x; var x1 = x + T(4.0); var x2 = x + T(8.0); var x3 = x + T(12.0);
  var x4 = x + T(16.0); var x5 = x + T(20.0); var x6 = x + T(24.0); var x7 = x + T(28.0);
  let m = vec4<T>(T(p.mul));
  let c = vec4<T>(T(p.add));
  for (var i = 0u; i < p.iters; i = i + 1u) {
    x0 = fma(x0, m, c); x1 = fma(x1, m, c); x2 = fma(x2, m, c); x3 = fma(x3, m, c);
    x4 = fma(x4, m, c); x5 = fma(x5, m, c); x6 = fma(x6, m, c); x7 = fma(x7, m, c);
  }
  out[gid.x] = vec4<f32>(x0) + vec4<f32>(x1) + vec4<f32>(x2) + vec4<f32>(x3)
             + vec4<f32>(x4) + vec4<f32>(x5) + vec4<f32>(x6) + vec4<f32>(x7);
}`,
  scatter: /* wgsl */ `
@group(0) @binding(0) var<storage, read> perm: array<u32>;
@group(0) @binding(1) var<storage, read_write> next: array<u32>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
  let lines = arrayLength(&perm);
  for (var k = gid.x; k < lines; k = k + nwg.x * 256u) {
    next[perm[k] * 32u] = perm[(k + 1u) % lines] * 32u;
  }
}`,
  chase: /* wgsl */ `
struct P { start: u32, steps: u32, slot: u32, pad: u32 }
@group(0) @binding(0) var<storage, read> next: array<u32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(1)
fn main() {
  var j = p.start;
  for (var i = 0u; i < p.steps; i = i + 1u) { j = next[j]; }
  out[p.slot] = j;
}`,
  matmul: /* wgsl */ `
@group(0) @binding(0) var<storage, read> A: array<f32>;
@group(0) @binding(1) var<storage, read> B: array<f32>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
@group(0) @binding(3) var<uniform> dims: vec4<u32>;
var<workgroup> tA: array<array<f32, 16>, 16>;
var<workgroup> tB: array<array<f32, 16>, 16>;
@compute @workgroup_size(16, 16)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
  let n = dims.x;
  let row = wid.y * 16u + lid.y;
  let col = wid.x * 16u + lid.x;
  var acc = 0.0;
  for (var t = 0u; t < n; t = t + 16u) {
    tA[lid.y][lid.x] = A[row * n + t + lid.x];
    tB[lid.y][lid.x] = B[(t + lid.y) * n + col];
    workgroupBarrier();
    for (var k = 0u; k < 16u; k = k + 1u) { acc = fma(tA[lid.y][k], tB[k][lid.x], acc); }
    workgroupBarrier();
  }
  C[row * n + col] = acc;
}`,
};

// ---------------------------------------------------------------------------------------------
// Messages a reader sees (plain text: nothing here is parsed as HTML)

const MSG = {
  insecure:
    "WebGPU needs a secure page (https, or localhost): this page was opened over plain http, so the " +
    "browser hides it. Open the guide over https to measure.",
  noWebgpu:
    "This browser does not offer WebGPU, so nothing can be measured here. WebGPU is on by default in " +
    "Chrome and Edge 113 and later (Windows, macOS, ChromeOS), Chrome 121 and later on Android 12+, " +
    "Safari 26 (macOS, iOS, iPadOS) and Firefox 141 and later on Windows; on Linux it may need a flag. " +
    "You can still measure with `python -m measure` and upload the file under Results.",
  noAdapter:
    "The browser has WebGPU but offered no GPU adapter: the GPU may be on the browser's block list, " +
    "hardware acceleration may be off, or WebGPU disabled in its settings. Nothing was measured.",
  hidden:
    "Stopped: the tab went to the background, and a background tab is throttled, so later numbers " +
    "would be wrong. What was measured before is kept; press Measure again to run it all once more.",
  stopped: "Stopped by you. What was measured before is kept.",
  left: "Stopped: you left this page. What was measured before is kept.",
};

function platformName() {
  const ua = navigator.userAgent || "";
  const hinted = (navigator.userAgentData && navigator.userAgentData.platform) || "";
  if (/Android/i.test(ua) || /Android/i.test(hinted)) return "android";
  if (/CrOS/i.test(ua) || /Chrome OS/i.test(hinted)) return "chromeos";
  if (/iPhone|iPad/i.test(ua)) return "ios";
  if (/Mac/i.test(ua) || /macOS/i.test(hinted)) return "mac";
  if (/Win/i.test(ua) || /Windows/i.test(hinted)) return "windows";
  if (/Linux/i.test(ua) || /Linux/i.test(hinted)) return "linux";
  return "other";
}

// The next step when WebGPU offers no adapter, for the reader's platform (the gpuweb wiki's
// Implementation Status page: Chromium on Linux keeps WebGPU behind command-line flags).
function noAdapterMessage(platform = platformName()) {
  const next = {
    linux:
      "On Linux, Chrome and Edge keep WebGPU behind a flag: quit the browser and start it from a terminal " +
      "with --enable-unsafe-webgpu --ozone-platform=x11 --use-angle=vulkan --enable-features=Vulkan,VulkanFromANGLE " +
      "(with up-to-date graphics drivers, Vulkan's included), then open this page again.",
    windows:
      "On Windows: update the GPU driver from its vendor, check that the browser's hardware acceleration is on " +
      "(Settings, System), and open chrome://gpu to see whether WebGPU is blocked for this GPU.",
    mac:
      "On a Mac: update macOS and the browser, check that hardware acceleration is on, and open chrome://gpu " +
      "(in Chrome or Edge) to see whether WebGPU is blocked.",
    chromeos: "On ChromeOS: update ChromeOS, then open chrome://gpu to see whether WebGPU is blocked for this GPU.",
    android: "On Android: WebGPU needs Android 12 or later and Chrome 121 or later with a supported GPU.",
    ios: "On an iPhone or iPad: WebGPU needs iOS or iPadOS 26 (Safari 26).",
    other: "Update the GPU driver and the browser, and check that hardware acceleration is on.",
  }[platform];
  return (
    `${MSG.noAdapter} ${next} Or measure without a browser: \`python -m measure --quick --json my-results.json\` ` +
    "on the machine, then upload the file under Results."
  );
}

// ---------------------------------------------------------------------------------------------
// The user interface inside the component (plain DOM, textContent only)

const CSS = `
.gfg-wg { font-family: var(--st-font, inherit); color: var(--st-text-color, inherit); }
.gfg-wg .row { display: flex; gap: 0.6rem; flex-wrap: wrap; align-items: center; margin: 0.2rem 0 0.6rem; }
.gfg-wg button { font: inherit; padding: 0.45rem 0.9rem; border-radius: 0.5rem; cursor: pointer;
  border: 1px solid var(--st-border-color, #b0b0b0); background: var(--st-secondary-background-color, #f0f2f6);
  color: var(--st-text-color, #1f1f1f); min-height: 2.5rem; }
.gfg-wg button.primary { background: var(--st-primary-color, #0072b2); border-color: var(--st-primary-color, #0072b2);
  color: var(--st-background-color, #ffffff); }
.gfg-wg button:disabled { opacity: 0.55; cursor: not-allowed; }
.gfg-wg button:focus-visible { outline: 3px solid var(--st-primary-color, #0072b2); outline-offset: 2px; }
.gfg-wg progress { width: 100%; height: 0.9rem; accent-color: var(--st-primary-color, #0072b2); }
.gfg-wg .status { margin: 0.4rem 0; overflow-wrap: anywhere; }
.gfg-wg .status.error { font-weight: 600; }
.gfg-wg .step { margin: 0.2rem 0; font-size: 0.92em; overflow-wrap: anywhere; }
.gfg-wg .adapter { margin: 0.2rem 0; font-size: 0.92em; overflow-wrap: anywhere; }
.gfg-wg ol { margin: 0.3rem 0 0; padding-left: 1.4rem; font-size: 0.88em; max-height: 12rem; overflow-y: auto; }
.gfg-wg li { overflow-wrap: anywhere; }
.gfg-wg ol:focus-visible { outline: 3px solid var(--st-primary-color, #0072b2); outline-offset: 2px; }
`;

class View {
  constructor(parent) {
    this.parent = parent;
    const doc = parent.ownerDocument || document;
    const root = doc.createElement("div");
    root.className = "gfg-wg";
    root.setAttribute("data-testid", "gfg-webgpu");
    const style = doc.createElement("style");
    style.textContent = CSS;
    const row = doc.createElement("div");
    row.className = "row";
    this.run = doc.createElement("button");
    this.run.className = "primary";
    this.run.type = "button";
    this.run.textContent = "Measure this device";
    this.stop = doc.createElement("button");
    this.stop.type = "button";
    this.stop.textContent = "Stop";
    this.stop.disabled = true;
    row.append(this.run, this.stop);
    this.bar = doc.createElement("progress");
    this.bar.max = 1;
    this.bar.value = 0;
    this.bar.setAttribute("aria-label", "Measurement progress");
    this.status = doc.createElement("p");
    this.status.className = "status";
    this.status.setAttribute("role", "status");
    this.status.setAttribute("aria-live", "polite");
    this.status.setAttribute("data-testid", "gfg-webgpu-status");
    // What runs now: updated at every kernel step, outside the live region so that a screen
    // reader is not read 30 seconds of steps (the status line announces start, end and faults).
    this.stepText = doc.createElement("p");
    this.stepText.className = "step";
    this.stepText.setAttribute("data-testid", "gfg-webgpu-step");
    this.adapter = doc.createElement("p");
    this.adapter.className = "adapter";
    this.adapter.setAttribute("data-testid", "gfg-webgpu-adapter");
    this.log = doc.createElement("ol");
    this.log.setAttribute("aria-label", "Kernels measured");
    this.log.tabIndex = 0; // it scrolls: keyboard users must be able to reach it (WCAG 2.1.1)
    root.append(style, row, this.bar, this.status, this.stepText, this.adapter, this.log);
    parent.appendChild(root);
    this.root = root;
  }

  connected() {
    const host = this.parent.host || this.parent;
    return !!(host && host.isConnected);
  }

  say(text, kind = "") {
    this.status.textContent = text;
    this.status.className = "status" + (kind ? " " + kind : "");
    this.status.setAttribute("data-state", kind || "info");
  }

  progress(fraction, text) {
    this.bar.value = Math.max(0, Math.min(1, fraction));
    if (text !== undefined) this.stepText.textContent = text;
  }

  line(text) {
    const item = this.log.ownerDocument.createElement("li");
    item.textContent = text;
    this.log.appendChild(item);
    this.log.scrollTop = this.log.scrollHeight;
  }

  running(on) {
    this.run.disabled = on || !!G.unavailable;
    this.stop.disabled = !on;
    this.root.setAttribute("data-running", on ? "true" : "false");
  }
}

// ---------------------------------------------------------------------------------------------
// Looking at the browser and its adapter before anything runs

function isMobile() {
  const ua = navigator.userAgent || "";
  return !!((navigator.userAgentData && navigator.userAgentData.mobile) || /Android|iPhone|iPad|Mobile/i.test(ua));
}

async function probe() {
  if (G.probed) return G.probed;
  const out = { ok: false, message: "", adapter: null };
  if (!navigator.gpu) {
    out.message = window.isSecureContext === false ? MSG.insecure : MSG.noWebgpu;
    out.code = window.isSecureContext === false ? "insecure" : "no_webgpu";
  } else {
    let adapter = null;
    try {
      adapter = await navigator.gpu.requestAdapter({ powerPreference: "high-performance" });
    } catch (e) {
      adapter = null;
    }
    if (!adapter) {
      out.message = noAdapterMessage();
      out.code = "no_adapter";
    } else {
      out.ok = true;
      out.adapter = adapter;
      out.info = adapterInfo(adapter);
    }
  }
  G.probed = out;
  return out;
}

function adapterInfo(adapter) {
  const info = adapter.info || {};
  const text = (v) => (typeof v === "string" ? v.slice(0, 200) : "");
  const out = {
    vendor: text(info.vendor),
    architecture: text(info.architecture),
    device: text(info.device),
    description: text(info.description),
    is_fallback_adapter: !!(info.isFallbackAdapter || adapter.isFallbackAdapter),
  };
  for (const [key, name] of [
    ["subgroupMinSize", "subgroup_min_size"],
    ["subgroupMaxSize", "subgroup_max_size"],
  ]) {
    if (typeof info[key] === "number") out[name] = info[key];
  }
  for (const key of ["type", "backend", "driver"]) {
    // Chrome's non-standard fields, present only with its WebGPU developer flag
    if (typeof info[key] === "string" && info[key]) out[key] = text(info[key]);
  }
  return out;
}

function adapterLabel(info) {
  if (info.description) return info.description;
  const parts = [info.vendor, info.architecture, info.device].filter(Boolean);
  return parts.length ? parts.join(" ") : "unnamed adapter";
}

// ---------------------------------------------------------------------------------------------
// The suite

const LIMIT_NAMES = [
  "maxStorageBufferBindingSize",
  "maxBufferSize",
  "maxComputeWorkgroupsPerDimension",
  "maxComputeInvocationsPerWorkgroup",
  "maxComputeWorkgroupStorageSize",
];

class Suite {
  constructor(view, options, send) {
    this.view = view;
    this.quick = options.quick !== false;
    const hooks = window.__gfgWebgpuTestHooks || {}; // set only by the browser tests
    const wanted = Array.isArray(hooks.kernels) && hooks.kernels.length ? hooks.kernels : options.kernels;
    this.kernels = Array.isArray(wanted) && wanted.length
      ? wanted
      : ["launch_overhead", "bandwidth", "compute", "latency", "matmul"];
    this.send = send;
    this.records = [];
    this.statuses = [];
    this.abort = null;
    this.lostInfo = null;
    this.mobile = isMobile();
    this.started = performance.now();
    this.dispatched = 0; // empty dispatches issued, checked against the GPU's own count
  }

  check() {
    if (this.lostInfo) throw new Stopped("device_lost", this.lostMessage());
    if (this.abort) throw new Stopped(this.abort.code, this.abort.message);
  }

  lostMessage() {
    const info = this.lostInfo || {};
    return (
      `The GPU device was lost (${info.reason || "unknown reason"}${info.message ? ": " + info.message : ""}). ` +
      "The driver may have reset after a long kernel, or the system reclaimed the GPU's memory. " +
      "What was measured before is kept."
    );
  }

  // ---- set-up: device, limits, features, timer ------------------------------------------------

  async setup() {
    // A fresh adapter each run: an adapter that has made a device once cannot make another.
    const adapter = await navigator.gpu.requestAdapter({ powerPreference: "high-performance" });
    if (!adapter) throw new Stopped("no_adapter", noAdapterMessage());
    this.info = adapterInfo(adapter);
    const wanted = {};
    for (const name of ["maxStorageBufferBindingSize", "maxBufferSize", "maxComputeWorkgroupsPerDimension"]) {
      if (adapter.limits[name]) wanted[name] = adapter.limits[name];
    }
    const features = [];
    if (adapter.features.has("timestamp-query")) features.push("timestamp-query");
    if (adapter.features.has("shader-f16")) features.push("shader-f16");
    this.limitsRefused = "";
    let device = null;
    try {
      device = await adapter.requestDevice({ requiredFeatures: features, requiredLimits: wanted });
    } catch (e) {
      this.limitsRefused =
        `The adapter refused its own largest limits (${String(e && e.message || e).slice(0, 160)}); ` +
        "measuring with WebGPU's default limits instead (buffers up to 128 MiB).";
      // The adapter object cannot be asked twice in every browser: ask for a fresh one.
      const again = await navigator.gpu.requestAdapter({ powerPreference: "high-performance" });
      device = await (again || adapter).requestDevice({ requiredFeatures: features });
    }
    this.device = device;
    G.device = device;
    device.lost.then((info) => {
      if (!this.finished) this.lostInfo = { reason: info.reason, message: String(info.message || "").slice(0, 200) };
    });
    device.onuncapturederror = (event) => {
      this.lastError = String((event.error && event.error.message) || event.error || "").slice(0, 300);
    };
    this.limits = {};
    for (const name of LIMIT_NAMES) this.limits[name] = device.limits[name];
    this.features = [...device.features].sort();
    this.hasTimestamps = device.features.has("timestamp-query");
    this.hasF16 = device.features.has("shader-f16");
    this.pipelines = {};
    await this.setupTimer();
  }

  async pipeline(name, code) {
    if (this.pipelines[name]) return this.pipelines[name];
    const module = this.device.createShaderModule({ code });
    const made = await this.device.createComputePipelineAsync({
      layout: "auto",
      compute: { module, entryPoint: "main" },
    });
    this.pipelines[name] = made;
    return made;
  }

  bind(pipeline, buffers) {
    return this.device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: buffers.map((buffer, binding) => ({ binding, resource: { buffer } })),
    });
  }

  buffer(size, usage) {
    return this.device.createBuffer({ size, usage });
  }

  uniform(words) {
    const buf = this.buffer(16, GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST);
    this.device.queue.writeBuffer(buf, 0, new Uint32Array(words));
    return buf;
  }

  async allocate(sizes, usage) {
    // Buffers of these sizes, or null when the GPU is out of memory (an error scope says so).
    this.device.pushErrorScope("out-of-memory");
    this.device.pushErrorScope("validation");
    const made = sizes.map((size) => this.buffer(size, usage));
    const invalid = await this.device.popErrorScope();
    const oom = await this.device.popErrorScope();
    if (invalid || oom) {
      for (const b of made) b.destroy();
      return null;
    }
    return made;
  }

  async readBack(source, offset, size) {
    const read = this.buffer(size, GPUBufferUsage.COPY_DST | GPUBufferUsage.MAP_READ);
    const enc = this.device.createCommandEncoder();
    enc.copyBufferToBuffer(source, offset, read, 0, size);
    this.device.queue.submit([enc.finish()]);
    await read.mapAsync(GPUMapMode.READ);
    const copy = read.getMappedRange().slice(0);
    read.unmap();
    read.destroy();
    return copy;
  }

  async run1(pipeline, group, workgroups) {
    const enc = this.device.createCommandEncoder();
    const pass = enc.beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, group);
    pass.dispatchWorkgroups(...[].concat(workgroups));
    pass.end();
    this.device.queue.submit([enc.finish()]);
    await this.device.queue.onSubmittedWorkDone();
  }

  async setupTimer() {
    // The wall clock's granularity: the smallest step performance.now() takes.
    let step = Infinity;
    const end = performance.now() + 25;
    let last = performance.now();
    while (performance.now() < end) {
      const t = performance.now();
      if (t > last) {
        step = Math.min(step, t - last);
        last = t;
      }
    }
    this.wallQuantum = (Number.isFinite(step) ? step : 0.1) / 1000;
    // One empty round trip: submit, then wait for the queue.
    const trips = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      this.device.queue.submit([this.device.createCommandEncoder().finish()]);
      await this.device.queue.onSubmittedWorkDone();
      trips.push((performance.now() - t0) / 1000);
    }
    this.roundTrip = summarize(trips).median;
    this.timer = {
      kind: "wall",
      wall_granularity_s: this.wallQuantum,
      submit_round_trip_s: this.roundTrip,
    };
    if (this.hasTimestamps) {
      try {
        this.querySet = this.device.createQuerySet({ type: "timestamp", count: 2 });
        this.resolve = this.buffer(16, GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC);
        const empty = await this.pipeline("empty", WGSL.empty);
        this.counter = this.buffer(16, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC);
        this.counterGroup = this.bind(empty, [this.counter]);
        const raws = [];
        let sane = true;
        for (const n of [1, 16, 256, 1, 16, 256]) {
          const s = await this.stampSample((pass) => this.encodeEmpty(pass, n), true);
          raws.push(s.raw[0], s.raw[1]);
          if (s.raw[1] < s.raw[0] || s.gpu > s.wall + 0.002) sane = false;
        }
        let quantum = 0n;
        for (const r of raws) quantum = gcdBig(quantum, r);
        if (sane && quantum > 0n) {
          this.stampQuantum = Number(quantum) * 1e-9;
          this.timer = {
            kind: "timestamp-query",
            resolution_s: this.stampQuantum,
            resolution_note:
              "the largest step every timestamp read was a multiple of (Chrome quantizes to 100 us " +
              "unless its WebGPU developer flag is on)",
            wall_granularity_s: this.wallQuantum,
            submit_round_trip_s: this.roundTrip,
          };
        } else {
          this.timer.note = "timestamp-query was offered but its readings were not usable; wall time used";
        }
      } catch (e) {
        this.timer.note = `timestamp-query failed (${String(e && e.message || e).slice(0, 120)}); wall time used`;
      }
    }
    const quantum = this.timer.kind === "timestamp-query" ? this.stampQuantum : this.wallQuantum;
    // A sample lasts at least 100 quanta (< 1 % granularity) and, on the wall clock, 50 round trips.
    let target = Math.max(100 * quantum, this.quick ? 0.004 : 0.01);
    if (this.timer.kind === "wall") target = Math.max(target, 50 * this.roundTrip);
    this.target = Math.min(target, 0.25);
    this.timer.target_sample_s = this.target;
    this.timerName =
      this.timer.kind === "timestamp-query"
        ? `webgpu timestamp-query (resolution ${seconds(this.stampQuantum)})`
        : `wall clock around queue.onSubmittedWorkDone() (granularity ${seconds(this.wallQuantum)})`;
  }

  encodeEmpty(pass, n) {
    pass.setPipeline(this.pipelines.empty);
    pass.setBindGroup(0, this.counterGroup);
    for (let i = 0; i < n; i++) pass.dispatchWorkgroups(1);
    this.dispatched += n;
  }

  async stampSample(encode, withWall = false) {
    const enc = this.device.createCommandEncoder();
    const pass = enc.beginComputePass({
      timestampWrites: { querySet: this.querySet, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 },
    });
    encode(pass);
    pass.end();
    enc.resolveQuerySet(this.querySet, 0, 2, this.resolve, 0);
    const read = this.buffer(16, GPUBufferUsage.COPY_DST | GPUBufferUsage.MAP_READ);
    enc.copyBufferToBuffer(this.resolve, 0, read, 0, 16);
    const t0 = performance.now();
    this.device.queue.submit([enc.finish()]);
    await read.mapAsync(GPUMapMode.READ);
    const wall = (performance.now() - t0) / 1000;
    const raw = new BigUint64Array(read.getMappedRange().slice(0));
    read.unmap();
    read.destroy();
    const gpu = Number(raw[1] - raw[0]) * 1e-9;
    return withWall ? { gpu, wall, raw: [raw[0], raw[1]] } : gpu;
  }

  async wallSample(encode) {
    const enc = this.device.createCommandEncoder();
    const pass = enc.beginComputePass();
    encode(pass);
    pass.end();
    const commands = enc.finish();
    const t0 = performance.now();
    this.device.queue.submit([commands]);
    await this.device.queue.onSubmittedWorkDone();
    return (performance.now() - t0) / 1000;
  }

  async sample(encode) {
    this.check();
    let t = this.timer.kind === "timestamp-query" ? await this.stampSample(encode) : await this.wallSample(encode);
    if (this.slowNext > 0) {
      // Test hook (window.__gfgWebgpuTestHooks.slowFirstDispatchS, set only by the browser tests):
      // this one sample reads as slow as the 9.65 ms outlier a real run once gave.
      t += this.slowNext;
      this.slowNext = 0;
    }
    this.check();
    if (this.tick) this.tick();
    return t;
  }

  // Calibrate `inner` repetitions of `encodeOne` to last the target (at least `minInner`; a sample
  // that reaches the target ends the calibration only if a second one does too: the minimum of the
  // two decides, so one slow sample cannot), warm up twice, then time `repeats` samples. A result
  // whose p90 / p10 exceeds NOISE_LIMIT is measured once more, then marked noisy. Returns
  // per-operation seconds statistics with the shortest sample's length in timer ticks.
  async timeOp(encodeOne, { maxInner = 4096, minInner = 1, repeats } = {}) {
    const encodeN = (n) => (pass) => {
      for (let i = 0; i < n; i++) encodeOne(pass);
    };
    await this.sample(encodeN(1)); // first use: pipeline and memory warm
    this.slowNext = this.slowPending || 0;
    this.slowPending = 0;
    let inner = Math.min(minInner, maxInner);
    for (let tries = 0; tries < 14; tries++) {
      let t = await this.sample(encodeN(inner));
      if (t >= this.target) t = Math.min(t, await this.sample(encodeN(inner)));
      if (t >= this.target || inner >= maxInner) break;
      const scale = t > 0 ? Math.min(16, Math.max(1.25, (1.2 * this.target) / t)) : 8;
      inner = Math.min(maxInner, Math.ceil(inner * scale));
    }
    const n = repeats || (this.quick ? 5 : 11);
    for (let w = 0; w < 2; w++) await this.sample(encodeN(inner));
    const measure = async () => {
      const samples = [];
      for (let r = 0; r < n; r++) samples.push((await this.sample(encodeN(inner))) / inner);
      return summarize(samples);
    };
    let s = await measure();
    let remeasured = false;
    if (s.p90 / s.p10 > NOISE_LIMIT) {
      remeasured = true;
      s = await measure();
    }
    const quantum = this.timer.kind === "timestamp-query" ? this.stampQuantum : this.wallQuantum;
    return {
      median_s: s.median,
      p10_s: s.p10,
      p90_s: s.p90,
      min_s: s.min,
      repeats: n,
      inner_loops: inner,
      timer: this.timerName,
      sample_s: s.median * inner,
      ticks: (s.min * inner) / quantum,
      noisy: s.p90 / s.p10 > NOISE_LIMIT,
      remeasured,
    };
  }

  common(extra) {
    return {
      device: "webgpu",
      device_name: adapterLabel(this.info),
      threads: 0,
      source: "webgpu",
      verified: true,
      warm_cache: true,
      l2_flushed: false,
      ...extra,
    };
  }

  fail(workload, message, code = "wrong_result") {
    // A kernel whose result was wrong ("wrong_result"), or a point whose timing could not be
    // trusted ("unreliable"): reported, never recorded as a number.
    this.statuses.push({ workload, ok: false, code, message, install_hint: "", detail: "" });
    this.view.line(`✗ ${message}`);
    this.view.say(`Problem, the run goes on: ${message}`, "running"); // faults are announced
  }

  // ---- launch overhead: empty dispatches --------------------------------------------------------

  async dispatchOverhead(step) {
    await this.pipeline("empty", WGSL.empty);
    if (!this.counter) {
      this.counter = this.buffer(16, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC);
      this.counterGroup = this.bind(this.pipelines.empty, [this.counter]);
    }
    const before = new Uint32Array(await this.readBack(this.counter, 0, 4))[0];
    const issuedBefore = this.dispatched;
    step("empty dispatches in one pass");
    const hooks = window.__gfgWebgpuTestHooks || {};
    this.slowPending = Number(hooks.slowFirstDispatchS) || 0; // the first calibration sample, below
    // At least 64 dispatches per sample: one dispatch alone measures the pass around it.
    const inPassOp = () => this.timeOp((pass) => this.encodeEmpty(pass, 1), { maxInner: 20000, minInner: 64 });
    let inPass = await inPassOp();
    // One dispatch per submit, waiting for the queue each time: what a synchronous framework pays.
    step("one dispatch per submit, waiting each time");
    const trip = async (n) => {
      const t0 = performance.now();
      for (let i = 0; i < n; i++) {
        this.check();
        const enc = this.device.createCommandEncoder();
        const pass = enc.beginComputePass();
        this.encodeEmpty(pass, 1);
        pass.end();
        this.device.queue.submit([enc.finish()]);
        await this.device.queue.onSubmittedWorkDone();
      }
      return (performance.now() - t0) / 1000;
    };
    let n = 4;
    for (let tries = 0; tries < 10; tries++) {
      const t = await trip(n);
      if (t >= 100 * this.wallQuantum && t >= (this.quick ? 0.01 : 0.03)) break;
      n = Math.min(4096, n * 4);
    }
    await trip(n);
    const samples = [];
    const repeats = this.quick ? 5 : 11;
    for (let r = 0; r < repeats; r++) samples.push((await trip(n)) / n);
    const s = summarize(samples);
    // One more dispatch inside a pass cannot cost more than a whole submit-and-wait: a figure above it
    // is an interrupted measurement. Measured once more; if it still is, it is not recorded.
    let inPassOk = inPass.min_s <= s.min;
    if (!inPassOk) {
      inPass = await inPassOp();
      inPassOk = inPass.min_s <= s.min;
    }
    const after = new Uint32Array(await this.readBack(this.counter, 0, 4))[0];
    const issued = this.dispatched - issuedBefore;
    if (after - before !== issued) {
      this.fail("launch_overhead", `empty dispatches: the GPU counted ${after - before} of ${issued} dispatches — no number recorded`);
      return;
    }
    const verification = `every dispatch adds 1 to a counter on the GPU; the counter read back equals the ${issued.toLocaleString("en-US")} dispatches issued`;
    if (inPassOk) {
      this.records.push({
        kind: "launch_overhead",
        ...this.common({}),
        op: "empty dispatch (one atomic add), many in one compute pass",
        mode: "webgpu-dispatch",
        ops_per_s: 1 / inPass.median_s,
        elements: 1,
        ...inPass,
        verification,
        notes:
          "GPU-side cost of one more dispatch inside a pass (barriers included), not a round trip; at least 64 " +
          "dispatches per sample, the launch-bound rule uses the fastest sample (min_s).",
      });
    } else {
      this.fail(
        "launch_overhead",
        `empty dispatches in one pass: ${seconds(inPass.min_s)} each, more than a whole submit-and-wait ` +
          `(${seconds(s.min)}), twice — the measurement was interrupted, no number recorded`,
        "unreliable",
      );
    }
    this.records.push({
      kind: "launch_overhead",
      ...this.common({}),
      op: "one empty dispatch per submit, then await queue.onSubmittedWorkDone()",
      mode: "webgpu-submit",
      ops_per_s: 1 / s.median,
      elements: 1,
      median_s: s.median,
      p10_s: s.p10,
      p90_s: s.p90,
      min_s: s.min,
      repeats,
      inner_loops: n,
      ticks: (s.min * n) / this.wallQuantum,
      noisy: s.p90 / s.p10 > NOISE_LIMIT,
      timer: `wall clock (granularity ${seconds(this.wallQuantum)})`,
      verification,
      notes: "A full round trip from JavaScript to the GPU and back: what code that waits after every kernel pays.",
    });
    this.view.line(
      inPassOk
        ? `✓ empty dispatch: ${seconds(inPass.median_s)} in a pass, ${seconds(s.median)} per submit and wait (verified)`
        : `✓ empty dispatch: ${seconds(s.median)} per submit and wait (verified)`,
    );
  }

  // ---- bandwidth: copy and triad ----------------------------------------------------------------

  bandwidthSizes() {
    const limit = Math.min(this.limits.maxStorageBufferBindingSize || 128 * MiB, this.limits.maxBufferSize || 256 * MiB);
    let cap = this.quick ? 256 * MiB : 1024 * MiB;
    if (this.mobile) cap = Math.min(cap, 64 * MiB);
    const memory = navigator.deviceMemory; // GB, rounded and capped by the browser
    if (memory) cap = Math.min(cap, Math.max(64 * MiB, (memory * 1e9) / 12)); // three arrays, a quarter of RAM
    const top = Math.floor(Math.min(limit, cap) / 4096) * 4096;
    const sizes = [];
    for (let s = 64 * KiB; s <= top; s *= 4) sizes.push(s);
    if (sizes.length && top > sizes[sizes.length - 1] * 1.5) sizes.push(top);
    this.bandwidthTop = { limit, cap, top };
    return sizes;
  }

  async bandwidth(step) {
    const usage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC;
    const init = await this.pipeline("init", WGSL.init);
    const sentinel = await this.pipeline("sentinel", WGSL.sentinel);
    const copy = await this.pipeline("copy", WGSL.copy);
    const triad = await this.pipeline("triad", WGSL.triad);
    const check = await this.pipeline("check", WGSL.check);
    const maxGroups = this.limits.maxComputeWorkgroupsPerDimension || 65535;
    // The next size is 4x larger: stop when its one pass would take longer than this.
    const maxOp = this.quick ? 0.12 : 0.6;
    const skipped = [];
    for (const arrayBytes of this.bandwidthSizes()) {
      this.check();
      const buffers = await this.allocate([arrayBytes, arrayBytes, arrayBytes], usage);
      if (!buffers) {
        skipped.push(`${human(arrayBytes)} per array: the GPU could not allocate it`);
        break;
      }
      const [a, b, c] = buffers;
      const vec4s = arrayBytes / 16;
      const groups = Math.min(Math.ceil(vec4s / WORKGROUP), maxGroups);
      await this.run1(init, this.bind(init, [a, b, c]), groups);
      let slow = false;
      try {
        for (const op of ["copy", "triad"]) {
          this.check();
          const arrays = op === "copy" ? 2 : 3;
          const workingSet = arrayBytes * arrays;
          step(`${op} over ${human(workingSet)}`);
          await this.run1(sentinel, this.bind(sentinel, [a]), groups);
          const pipe = op === "copy" ? copy : triad;
          const group = this.bind(pipe, op === "copy" ? [a, b] : [a, b, c]);
          const timing = await this.timeOp((pass) => {
            pass.setPipeline(pipe);
            pass.setBindGroup(0, group);
            pass.dispatchWorkgroups(groups);
          });
          const wrong = await this.verifyStream(check, a, op, arrayBytes, groups);
          if (wrong) {
            this.fail("bandwidth", `${op} over ${human(workingSet)}: ${wrong} — no number recorded`);
            continue;
          }
          const gbps = workingSet / timing.median_s / 1e9;
          this.records.push({
            kind: "bandwidth",
            ...this.common({}),
            op,
            bytes: workingSet,
            elements: arrayBytes / 4,
            dtype: "float32",
            gb_per_s: gbps,
            bytes_per_s: workingSet / timing.median_s,
            best_gb_per_s: workingSet / timing.min_s / 1e9,
            ...timing,
            cache_hint: "",
            workgroup_size: WORKGROUP,
            workgroups: groups,
            verification:
              "every element compared on the GPU against the expected value; three slices also read back and compared in JavaScript",
            notes: `STREAM counting: ${arrays} arrays of ${human(arrayBytes)} (vec4<f32>), grid-stride loop.`,
          });
          this.view.line(`✓ ${op} ${human(workingSet)}: ${num(gbps)} GB/s (verified)`);
          if (4 * timing.median_s > maxOp) slow = true;
        }
      } finally {
        for (const buf of buffers) buf.destroy();
      }
      if (slow) {
        skipped.push(
          `stopped at ${human(arrayBytes)} per array: one pass over 4x as much would take over ${maxOp} s ` +
            `(largest storage buffer ${human(this.bandwidthTop.limit)})`,
        );
        break;
      }
    }
    this.bandwidthNote = skipped.join("; ");
  }

  async verifyStream(check, a, op, arrayBytes, groups) {
    const bad = this.buffer(16, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC);
    const mode = this.uniform([op === "copy" ? 0 : 1, 0, 0, 0]);
    await this.run1(check, this.bind(check, [a, bad, mode]), Math.min(groups, 4096));
    const count = new Uint32Array(await this.readBack(bad, 0, 4))[0];
    bad.destroy();
    mode.destroy();
    if (count) return `${count.toLocaleString("en-US")} of ${(arrayBytes / 4).toLocaleString("en-US")} elements wrong on the GPU's check`;
    const floats = arrayBytes / 4;
    const span = Math.min(1024, floats);
    for (const start of [0, Math.floor(floats / 2 / 4) * 4, floats - span]) {
      const got = new Float32Array(await this.readBack(a, start * 4, span * 4));
      for (let k = 0; k < span; k++) {
        const j = start + k;
        const want = op === "copy" ? patternB(j) : Math.fround(patternB(j) + TRIAD_SCALAR * patternC(j));
        if (got[k] !== want) return `element ${j} is ${got[k]}, expected ${want}`;
      }
    }
    return "";
  }

  // ---- arithmetic: an FMA chain ------------------------------------------------------------------

  async compute(step) {
    const types = ["f32"].concat(this.hasF16 ? ["f16"] : []);
    for (const type of types) {
      this.check();
      step(`FMA chain, ${type}`);
      const f16 = type === "f16";
      const pipe = await this.pipeline(`fma-${type}`, WGSL.fma(f16));
      const iters = 1024; // a count every lane holds exactly, even in f16 (below 2,048)
      const params = new ArrayBuffer(16);
      new Uint32Array(params, 0, 1)[0] = iters;
      new Float32Array(params, 4, 2).set([1, 1]); // x = x * 1 + 1: from a uniform, so nothing folds
      const p = this.buffer(16, GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST);
      this.device.queue.writeBuffer(p, 0, params);
      // The output (one vec4 per invocation) must fit one storage binding, as the grid one dimension.
      const bindable = Math.min(this.limits.maxStorageBufferBindingSize || 128 * MiB, this.limits.maxBufferSize || 256 * MiB);
      const maxGroups = Math.min(this.limits.maxComputeWorkgroupsPerDimension || 65535, Math.floor(bindable / (WORKGROUP * 16)));
      // Grow the grid until one dispatch lasts about 2 ms (or the grid is as large as allowed).
      let groups = 16;
      let out = null;
      let group = null;
      const encode = (pass) => {
        pass.setPipeline(pipe);
        pass.setBindGroup(0, group);
        pass.dispatchWorkgroups(groups);
      };
      for (;;) {
        if (out) out.destroy();
        out = this.buffer(groups * WORKGROUP * 16, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC);
        group = this.bind(pipe, [p, out]);
        await this.sample(encode);
        const t = await this.sample(encode);
        if (t >= 0.002 || groups >= maxGroups || (this.quick && t >= 0.0005)) break;
        groups = Math.min(maxGroups, groups * 4);
      }
      const timing = await this.timeOp(encode, { maxInner: 256 });
      // Verify: lane value = start + iters (exact), summed over 8 chains.
      const invocations = groups * WORKGROUP;
      let wrong = "";
      for (const first of [0, Math.floor(invocations / 2), invocations - 64]) {
        const got = new Float32Array(await this.readBack(out, first * 16, 64 * 16));
        for (let t = 0; t < 64 && !wrong; t++) {
          const base = (first + t) % 64;
          for (let lane = 0; lane < 4; lane++) {
            const want = 8 * (base + lane) + 112 + 8 * iters;
            if (got[t * 4 + lane] !== want) {
              wrong = `invocation ${first + t} lane ${lane} is ${got[t * 4 + lane]}, expected ${want}`;
              break;
            }
          }
        }
      }
      out.destroy();
      p.destroy();
      if (wrong) {
        this.fail("compute", `FMA chain ${type}: ${wrong} — no number recorded`);
        continue;
      }
      const flops = invocations * iters * 8 * 4 * 2;
      const outBytes = invocations * 16;
      const dtype = f16 ? "float16" : "float32";
      this.records.push({
        kind: "compute",
        ...this.common({}),
        op: "fma_chain",
        dtype,
        flops,
        flops_per_s: flops / timing.median_s,
        tflops: flops / timing.median_s / 1e12,
        best_tflops: flops / timing.min_s / 1e12,
        bytes: outBytes,
        intensity_flop_per_byte: flops / outBytes,
        invocations,
        iterations: iters,
        chains_per_invocation: 8,
        ...timing,
        verification: "three blocks of 64 invocations read back: every lane equals its start value plus the iteration count, exactly",
        notes:
          `${invocations.toLocaleString("en-US")} invocations x ${iters} iterations x 8 independent vec4<${type}> fma chains ` +
          "(2 FLOP per lane per fma); vector ALUs, not tensor/matrix units, which WebGPU does not expose.",
      });
      this.view.line(`✓ FMA chain ${type}: ${flopsText(flops / timing.median_s)} (verified)`);
    }
  }

  // ---- latency: a pointer chase ------------------------------------------------------------------

  chaseSizes() {
    // Rings from 16 KiB (quick) or 4 KiB up to 256 MiB (quick) or 1 GiB: past the L2 of every GPU in
    // the catalog and AMD's Infinity Cache, where the adapter's largest storage buffer allows.
    const limit = Math.min(this.limits.maxStorageBufferBindingSize || 128 * MiB, this.limits.maxBufferSize || 256 * MiB);
    let cap = this.quick ? 256 * MiB : 1024 * MiB;
    if (this.mobile) cap = Math.min(cap, 16 * MiB);
    const sizes = [];
    for (let s = this.quick ? 16 * KiB : 4 * KiB; s <= Math.min(limit, cap); s *= 4) sizes.push(s);
    this.chaseTop = { limit, cap };
    return sizes;
  }

  async latency(step) {
    const scatter = await this.pipeline("scatter", WGSL.scatter);
    const chase = await this.pipeline("chase", WGSL.chase);
    const maxGroups = this.limits.maxComputeWorkgroupsPerDimension || 65535;
    const repeats = this.quick ? 5 : 11;
    // Seconds one walk may take: far below the ~2 s after which a GPU watchdog resets a kernel.
    const walkCap = Math.max(this.quick ? 0.5 : 1.0, 2 * this.target);
    // Seconds one ring may take in all (a warm lap, then the timed pairs): the ladder stops before a
    // ring whose estimate is longer, and says so.
    const ringBudget = this.quick ? 8 : 25;
    let perLoad = 0; // seconds per load at the last ring measured
    for (const bytes of this.chaseSizes()) {
      this.check();
      const lines = bytes / LINE_BYTES;
      if (perLoad > 0) {
        const laps = 1 + 1.25 * Math.max(repeats, Math.ceil((lines * perLoad) / walkCap));
        const estimate = 1.5 * lines * perLoad * laps; // latency grows with the ring: 1.5x margin
        if (estimate > ringBudget) {
          this.latencyNote = `stopped before ${human(bytes)}: walking it a lap at a time would take about ${num(estimate)} s`;
          break;
        }
      }
      step(`pointer chase over ${human(bytes)}`);
      // Every line in a random order (Fisher-Yates), linked in a ring: perm[k] -> perm[k + 1], the
      // last back to the first, so the walk is one cycle through every line.
      const perm = new Uint32Array(lines);
      for (let i = 0; i < lines; i++) perm[i] = i;
      for (let i = lines - 1; i > 0; i--) {
        const j = Math.floor(Math.random() * (i + 1));
        const t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
      }
      const bufs = await this.allocate(
        [bytes, lines * 4],
        GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC,
      );
      if (!bufs) {
        this.latencyNote = `stopped at ${human(bytes)}: the GPU could not allocate it`;
        break;
      }
      const [next, permBuf] = bufs;
      const out = this.buffer(16, GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC);
      try {
        this.device.queue.writeBuffer(permBuf, 0, perm);
        await this.run1(scatter, this.bind(scatter, [permBuf, next]), Math.min(Math.ceil(lines / WORKGROUP), maxGroups));
        // Each walk starts where the previous one ended (`pos`, an index into the ring), so
        // consecutive walks go on round the ring instead of re-reading its first lines; the end of
        // the last walk of each slot (0: long, 1: short) is read back and checked.
        let pos = Math.floor(Math.random() * lines);
        const ends = [null, null];
        const walk = async (steps, slot = 0) => {
          const p = this.uniform([perm[pos] * 32, steps, slot, 0]);
          const group = this.bind(chase, [next, out, p]);
          const t = await this.sample((pass) => {
            pass.setPipeline(chase);
            pass.setBindGroup(0, group);
            pass.dispatchWorkgroups(1);
          });
          p.destroy();
          pos = (pos + steps) % lines;
          ends[slot] = perm[pos] * 32;
          return t;
        };
        // Warm a full lap (in walks short enough for the watchdog), then calibrate a walk to last
        // the target time: the shorter of two walks decides, so one interrupted sample cannot end
        // the calibration early.
        let steps = Math.min(lines, 16384);
        const first = await walk(steps);
        let warm = steps;
        const chunk = Math.max(16384, Math.floor((0.5 * walkCap * steps) / Math.max(first, 1e-6)));
        while (warm < lines) {
          const n = Math.min(chunk, lines - warm);
          await walk(n);
          warm += n;
        }
        steps = 16384;
        let t = 0;
        for (let tries = 0; tries < 12; tries++) {
          t = Math.min(await walk(steps), await walk(steps));
          if (t >= this.target || t > walkCap) break;
          steps = Math.min(1 << 26, Math.ceil(steps * (t > 0 ? Math.min(16, (1.2 * this.target) / t) : 8)));
        }
        // Size the walks to cover the ring: a long walk of a whole lap where it fits in the watchdog's
        // margin, else as long as fits, with enough pairs that the long walks together go round once.
        const est = t > 0 ? t / steps : 1e-6;
        steps = Math.min(1 << 26, Math.max(steps, Math.min(lines, Math.floor(walkCap / est))));
        const pairs = Math.min(64, Math.max(repeats, Math.ceil(lines / steps)));
        const shortSteps = Math.max(1, Math.floor(steps / 4));
        const measurePairs = async () => {
          const longs = [];
          const shorts = [];
          for (let r = 0; r < pairs; r++) {
            // long and short walks in pairs: the difference cancels fixed costs and slow drifts
            longs.push(await walk(steps, 0));
            shorts.push(await walk(shortSteps, 1));
          }
          const perLoadNs = longs.map((x, i) => ((x - shorts[i]) / (steps - shortSteps)) * 1e9);
          return { longs, shorts, s: summarize(perLoadNs) };
        };
        let m = await measurePairs();
        let remeasured = false;
        if (!(m.s.p10 > 0) || m.s.p90 / m.s.p10 > NOISE_LIMIT) {
          remeasured = true; // too noisy or drowned: measure the ring once more
          m = await measurePairs();
        }
        const { longs, shorts, s } = m;
        const got = new Uint32Array(await this.readBack(out, 0, 8));
        if (got[0] !== ends[0] || got[1] !== ends[1]) {
          this.fail("latency", `pointer chase over ${human(bytes)}: the walk ended at ${got[0]}, expected ${ends[0]} — no number recorded`);
          continue;
        }
        if (!(s.p10 > 0)) {
          this.fail(
            "latency",
            `pointer chase over ${human(bytes)}: the long walks were not reliably slower than the short ones ` +
              "(the timer, or other work on this computer, drowned the difference) — no number recorded",
            "unreliable",
          );
          continue;
        }
        const noisy = s.p90 / s.p10 > NOISE_LIMIT;
        const timed = pairs * (steps + shortSteps);
        const quantum = this.timer.kind === "timestamp-query" ? this.stampQuantum : this.wallQuantum;
        const ticks = Math.min(...longs.map((x, i) => x - shorts[i])) / quantum;
        this.records.push({
          kind: "latency",
          ...this.common({}),
          threads: 1,
          bytes,
          ns: s.median,
          loads: steps,
          short_loads: shortSteps,
          long_walk_s: longs,
          short_walk_s: shorts,
          ring_lines: lines,
          warm_loads: warm,
          timed_loads: timed,
          laps: timed / lines,
          method:
            `one WebGPU invocation walks a random ring through all ${lines.toLocaleString("en-US")} ${LINE_BYTES}-byte lines ` +
            `of the ${human(bytes)} buffer, each load's address the value the previous load returned; every walk starts ` +
            `where the previous one ended, so the walks go on round the ring; a full lap warms it first, and the ` +
            `${pairs} timed pairs walk ${num(timed / lines)} laps; time per load = (t(${steps.toLocaleString("en-US")} loads) - ` +
            `t(${shortSteps.toLocaleString("en-US")} loads)) / the difference, walked in pairs, which cancels dispatch and submit costs`,
          line_bytes: LINE_BYTES,
          repeats: pairs,
          p10_ns: s.p10,
          p90_ns: s.p90,
          min_ns: s.min,
          ticks,
          noisy,
          remeasured,
          timer: this.timerName,
          cache_hint: "",
          verification: "the last long and short walks' final indices read back equal the permutation's",
          notes: "WGSL bounds-checks every load (robust buffer access), which adds an ALU step per load.",
        });
        this.view.line(
          `✓ chase ${human(bytes)}: ${num(s.median)} ns per load, ${num(timed / lines)} laps (verified${noisy ? ", noisy" : ""})`,
        );
        perLoad = s.median * 1e-9;
      } finally {
        next.destroy();
        permBuf.destroy();
        out.destroy();
      }
    }
  }

  // ---- a tiled matmul ---------------------------------------------------------------------------

  async matmul(step) {
    const pipe = await this.pipeline("matmul", WGSL.matmul);
    const sizes = this.quick ? [256, 512] : [256, 512, 1024, 2048];
    const a = (i, k) => ((i * 3 + k * 5) % 7) - 3;
    const b = (k, j) => ((k * 2 + j * 3) % 5) - 2;
    for (const n of sizes) {
      this.check();
      step(`matmul ${n}×${n}×${n}, f32`);
      const bytes = n * n * 4;
      const bufs = await this.allocate(
        [bytes, bytes, bytes],
        GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC,
      );
      if (!bufs) break;
      const [A, B, C] = bufs;
      const dims = this.uniform([n, 0, 0, 0]);
      let slow = false;
      try {
        const ha = new Float32Array(n * n);
        const hb = new Float32Array(n * n);
        for (let i = 0; i < n; i++) {
          for (let k = 0; k < n; k++) {
            ha[i * n + k] = a(i, k);
            hb[i * n + k] = b(i, k);
          }
        }
        this.device.queue.writeBuffer(A, 0, ha);
        this.device.queue.writeBuffer(B, 0, hb);
        const group = this.bind(pipe, [A, B, C, dims]);
        const timing = await this.timeOp(
          (pass) => {
            pass.setPipeline(pipe);
            pass.setBindGroup(0, group);
            pass.dispatchWorkgroups(n / 16, n / 16);
          },
          { maxInner: 64 },
        );
        const got = new Float32Array(await this.readBack(C, 0, bytes));
        let wrong = "";
        for (let probe = 0; probe < 256 && !wrong; probe++) {
          const i = probe < 2 ? probe * (n - 1) : Math.floor(Math.random() * n);
          const j = probe < 2 ? probe * (n - 1) : Math.floor(Math.random() * n);
          let want = 0;
          for (let k = 0; k < n; k++) want += a(i, k) * b(k, j);
          if (got[i * n + j] !== want) wrong = `C[${i}][${j}] is ${got[i * n + j]}, expected ${want}`;
        }
        if (wrong) {
          this.fail("matmul", `matmul ${n}: ${wrong} — no number recorded`);
          continue;
        }
        const flops = 2 * n * n * n;
        this.records.push({
          kind: "matmul",
          ...this.common({}),
          dtype: "float32",
          m: n,
          n,
          k: n,
          flops,
          tflops: flops / timing.median_s / 1e12,
          flops_per_s: flops / timing.median_s,
          best_tflops: flops / timing.min_s / 1e12,
          bytes: 3 * bytes,
          intensity_flop_per_byte: flops / (3 * bytes),
          shape: "square",
          math: "WGSL, 16x16 tiles in workgroup memory, one output per invocation",
          ...timing,
          verification: "256 entries of C (two corners and 254 at random) equal the exact integer product computed in JavaScript",
          notes: "A plain tiled kernel, far from a vendor library: it shows the shape of the roofline, not the GPU's matmul peak.",
        });
        this.view.line(`✓ matmul ${n}: ${flopsText(flops / timing.median_s)} (verified)`);
        if (timing.median_s > (this.quick ? 0.1 : 0.5)) slow = true;
      } finally {
        for (const buf of bufs) buf.destroy();
        dims.destroy();
      }
      if (slow) break;
    }
  }

  // ---- the run ----------------------------------------------------------------------------------

  document(final) {
    const elapsed = (performance.now() - this.started) / 1000;
    const browser = {
      user_agent: String(navigator.userAgent || "").slice(0, 300),
      mobile: this.mobile,
      hardware_concurrency: navigator.hardwareConcurrency || null,
      device_memory_gb: navigator.deviceMemory || null,
      cross_origin_isolated: !!window.crossOriginIsolated,
    };
    return {
      schema: 1,
      tool: TOOL,
      created_utc: new Date().toISOString().replace(/\.\d+Z$/, "+00:00"),
      quick: this.quick,
      hosted: null,
      device: {
        type: "webgpu",
        device: "webgpu",
        source: "webgpu",
        name: adapterLabel(this.info || {}),
        adapter: this.info || {},
        features: this.features || [],
        limits: this.limits || {},
        limits_refused: this.limitsRefused || "",
        timer: this.timer || {},
        browser,
      },
      results: this.records,
      statuses: this.statuses,
      webgpu_run: {
        final,
        elapsed_s: elapsed,
        kernels: this.kernels,
        bandwidth_note: this.bandwidthNote || "",
        latency_note: this.latencyNote || "",
        bandwidth_top_bytes: this.bandwidthTop || null,
      },
    };
  }
}

const WEIGHTS = { launch_overhead: 1, bandwidth: 5, compute: 2, latency: 4, matmul: 2 };

async function runSuite(view, options, send) {
  const probed = await probe();
  if (!probed.ok) {
    view.say(probed.message, "error");
    return;
  }
  const suite = new Suite(view, options, send);
  G.suite = suite;
  G.running = true;
  view.running(true);
  view.stop.focus(); // the Measure button is now disabled: focus goes to Stop, not to the page body
  view.log.textContent = "";
  view.say(
    `Measuring started (${suite.quick ? "quick run" : "full run"}). Keep this tab in front; Stop ends it. ` +
      "The end, and any problem, will be announced here.",
    "running",
  );
  view.progress(0, "Starting: asking the browser for a GPU device…");
  let outcome = null;
  try {
    await suite.setup();
    const timerText =
      suite.timer.kind === "timestamp-query"
        ? `timestamp-query, resolution ${seconds(suite.stampQuantum)}`
        : `wall clock, granularity ${seconds(suite.wallQuantum)} (no timestamp-query)`;
    view.adapter.textContent =
      `Adapter: ${adapterLabel(suite.info)}${suite.info.is_fallback_adapter ? " (a software adapter: it runs on your CPU)" : ""}` +
      ` · timer: ${timerText}` +
      (suite.limitsRefused ? ` · ${suite.limitsRefused}` : "");
    const plan = ["launch_overhead", "bandwidth", "compute", "latency", "matmul"].filter((k) => suite.kernels.includes(k));
    const total = plan.reduce((sum, k) => sum + WEIGHTS[k], 0);
    let done = 0;
    for (const workload of plan) {
      const span = WEIGHTS[workload] / total;
      let inner = 0;
      let label = "";
      const show = () => {
        const at = done + span * inner;
        suite.view.progress(at, `${label} (${Math.round(at * 100)} %)`);
      };
      const step = (text) => {
        inner = Math.min(inner + 0.08, 0.92);
        label = text;
        show();
      };
      // Every timed sample moves the bar a little (a long matmul's samples too), never past its span.
      suite.tick = () => {
        inner += (0.92 - inner) * 0.02;
        if (label) show();
      };
      const before = suite.records.length;
      const failedBefore = suite.statuses.length;
      try {
        await suite[workload === "launch_overhead" ? "dispatchOverhead" : workload](step);
        const count = suite.records.length - before;
        const problems = suite.statuses.slice(failedBefore);
        const wrong = problems.filter((s) => s.code === "wrong_result").length;
        const shaky = problems.filter((s) => s.code === "unreliable").length;
        const note = workload === "bandwidth" ? suite.bandwidthNote : workload === "latency" ? suite.latencyNote : "";
        const parts = [`${count} result(s)`];
        if (wrong) parts.push(`${wrong} kernel(s) gave a wrong result and were dropped`);
        if (shaky) parts.push(`${shaky} point(s) dropped as unreliable`);
        suite.statuses.push({
          workload,
          ok: wrong === 0,
          code: wrong ? "wrong_result" : "ok",
          message: parts.join(", ") + (note ? `; ${note}` : ""),
          install_hint: "",
          detail: "",
        });
      } catch (e) {
        if (e instanceof Stopped) {
          suite.statuses.push({ workload, ok: false, code: e.code, message: e.message, install_hint: "", detail: "" });
          throw e;
        }
        const message = `${workload} failed: ${String(e && e.message || e).slice(0, 300)}`;
        suite.statuses.push({ workload, ok: false, code: "error", message, install_hint: "", detail: "" });
        view.line(`✗ ${message}`);
        if (suite.lostInfo) throw new Stopped("device_lost", suite.lostMessage());
      }
      done += span;
      view.progress(done);
      send(suite.document(false));
    }
    const elapsed = (performance.now() - suite.started) / 1000;
    outcome = [`Done: ${suite.records.length} results in ${num(elapsed)} s. They are drawn below and on the Roofline and Memory hierarchy pages.`, "done"];
  } catch (e) {
    const code = e instanceof Stopped ? e.code : "error";
    const text = e instanceof Stopped ? e.message : `The run failed: ${String(e && e.message || e).slice(0, 300)}. What was measured before is kept.`;
    outcome = [`${text} (${suite.records.length} results kept.)`, code === "stopped" ? "stopped" : "error"];
  } finally {
    suite.finished = true;
    G.running = false;
    G.suite = null;
    (suite.view || view).running(false);
    try {
      if (suite.device) suite.device.destroy();
    } catch (e) {
      /* already lost */
    }
    send(suite.document(true));
    const shown = suite.view || view;
    if (outcome) shown.say(outcome[0], outcome[1]);
    if (outcome && outcome[1] === "done") shown.progress(1, "Finished.");
    else shown.progress(shown.bar.value, "");
    // Focus back on Measure (enabled again) when it was on Stop or fell to the page.
    const d = shown.root.ownerDocument;
    const host = shown.parent.host; // set when the component draws into a shadow root
    const active = host && d.activeElement === host ? shown.parent.activeElement : d.activeElement;
    if (!active || active === d.body || active === shown.stop) shown.run.focus();
  }
}

function stopRun(code, message) {
  if (G.running && G.suite && !G.suite.abort) G.suite.abort = { code, message };
}

if (!G.listening) {
  G.listening = true;
  document.addEventListener("visibilitychange", () => {
    if (document.hidden) stopRun("hidden", MSG.hidden);
  });
}

export default function (component) {
  const { data, setTriggerValue, parentElement } = component;
  G.options = data || {};
  G.setTrigger = setTriggerValue;
  let view = G.view;
  if (!view || view.parent !== parentElement || !view.connected()) {
    view = new View(parentElement);
    G.view = view;
    if (G.running && G.suite) G.suite.view = view;
    view.run.addEventListener("click", () => {
      if (G.running) return;
      const send = (doc) => {
        G.seq += 1;
        G.setTrigger("result", JSON.stringify({ seq: G.seq, doc }));
      };
      runSuite(G.view, G.options, send);
    });
    view.stop.addEventListener("click", () => {
      stopRun("stopped", MSG.stopped);
      view.say("Stopping after the kernel in progress…", "running");
    });
    view.running(G.running);
    if (!G.running) {
      view.say("Checking for WebGPU…");
      probe().then((probed) => {
        if (!probed.ok) {
          G.unavailable = probed.code;
          view.say(probed.message, "error");
          view.root.setAttribute("data-unavailable", probed.code);
          view.running(false);
          return;
        }
        const info = probed.info;
        view.adapter.textContent =
          `Adapter: ${adapterLabel(info)}` +
          (info.is_fallback_adapter ? " (a software adapter: it runs on your CPU, so it measures an emulator, not a GPU)" : "");
        view.say(
          (G.options.quick === false
            ? "Ready. A full run takes up to a few minutes (86 s on Chromium's software adapter on a 2-core " +
              "machine, its ladders to 192 MiB and 256 MiB); the bar moves with every sample. Keep this tab in " +
              "front while it runs."
            : "Ready. A quick run takes about 15–30 seconds (16–21 s on Chromium's software adapter on a 2-core " +
              "machine); keep this tab in front while it runs.") +
            (isMobile()
              ? " On a phone the buffers are kept small (64 MiB at most), the screen must stay on, and a " +
                "phone that warms up slows down, so a second run may read lower."
              : ""),
        );
        view.root.setAttribute("data-ready", "true");
      });
    }
  }
  return () => {
    // Unmounted (another section or page): stop a run that was drawing into this element.
    setTimeout(() => {
      if (G.view === view && !view.connected()) stopRun("left", MSG.left);
    }, 500);
  };
}
