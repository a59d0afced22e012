"""Live class: a lecturer poses the course's questions to a room; students vote from phones."""

from ui.class_view import render

render()
