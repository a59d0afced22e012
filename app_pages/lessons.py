"""Lessons: the course index, one step at a time, the summary, and "Plan a class".

The address says where the reader is: ``?lesson=<id>&step=<n>`` opens a step (a teacher can link
one), ``?plan=1`` the class planner. Answers stay in the session.
"""

from __future__ import annotations

import streamlit as st

from lessons import LessonError, load_lessons
from ui.lesson_view import course_index, plan_a_class, render_step, render_summary

try:
    lessons = load_lessons()
except LessonError as exc:  # a broken lesson file: say which, never a traceback
    st.error(f"The course could not be loaded: {exc}")
    st.stop()

wanted = st.query_params.get("lesson")
lesson = next((item for item in lessons if item.id == wanted), None)
if st.query_params.get("plan"):
    plan_a_class(lessons)
elif lesson is None:
    if wanted:
        st.info(f"There is no lesson called “{wanted[:60]}”; here is the course.")
    course_index(lessons)
else:
    try:
        number = int(st.query_params.get("step", "1"))
    except ValueError:
        number = 1
    number = min(max(number, 1), len(lesson.steps) + 1)
    if number > len(lesson.steps):
        render_summary(lesson, lessons)
    else:
        render_step(lesson, number)
