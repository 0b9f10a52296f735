"""confmerge package."""
from confmerge.merge import deep_merge
from confmerge.layers import DELETE, merge_layers
