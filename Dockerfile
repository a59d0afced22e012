# GPU Field Guide: one Streamlit replica, as Community Cloud runs it (requirements.txt only: no torch).
#   docker build -t gpu-field-guide .
#   docker run --rm -p 8501:8501 gpu-field-guide
# Several replicas behind nginx with sticky sessions: deploy/README.md.
FROM python:3.11-slim-bookworm

# MALLOC_ARENA_MAX: glibc keeps freed memory per thread arena and every session's script runs on
# its own thread; two arenas kept a 30-session server's peak RSS ~50 MiB lower (bench.concurrency).
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    MALLOC_ARENA_MAX=2 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY requirements.txt ./
RUN pip install -r requirements.txt

# The app's files stay owned by root, read-only to the user that runs it; bytecode is compiled
# here because that user cannot write __pycache__.
COPY . .
RUN python -m compileall -q . \
    && useradd --create-home --uid 10001 --shell /usr/sbin/nologin app
USER app

EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import urllib.request as u; u.build_opener(u.ProxyHandler({})).open('http://127.0.0.1:8501/_stcore/health', timeout=4)"]

CMD ["streamlit", "run", "app.py", \
     "--server.headless=true", "--server.address=0.0.0.0", "--server.port=8501", \
     "--server.fileWatcherType=none", "--browser.gatherUsageStats=false"]
