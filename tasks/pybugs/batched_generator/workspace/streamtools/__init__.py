"""streamtools package."""
from streamtools.chunks import batched
from streamtools.pipeline import sum_batches
