"""Minimal data loading utilities."""
from dataset.batches import Batches
from dataset.sampler import SequentialSampler, StridedSampler

__all__ = ["Batches", "SequentialSampler", "StridedSampler"]
