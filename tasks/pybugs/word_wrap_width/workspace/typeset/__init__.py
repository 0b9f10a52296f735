"""typeset package."""
from typeset.wrap import wrap_text
from typeset.justify import justify
