"""tasks package."""
from tasks.model import Task
from tasks.queue import TaskQueue
