"""webutil package."""
from webutil.urls import build_query, build_url
from webutil.params import flatten_params
