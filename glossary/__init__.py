"""The glossary: term files in glossary/terms, their loader and the shared search."""

from glossary.loader import TermFileError, load_terms, terms_by_id
from glossary.model import CATEGORIES, SimulatorLink, Term
from glossary.search import SearchIndex, search, suggest

__all__ = [
    "CATEGORIES",
    "SearchIndex",
    "SimulatorLink",
    "Term",
    "TermFileError",
    "load_terms",
    "search",
    "suggest",
    "terms_by_id",
]
