"""The parse-time values of task launches: a task id bound by `with pl.at(...) as tid`,
`pl.no_dep(t)` arguments, pl.submit's result, and the counter of fresh task ids. Both the
expression parser and the control-flow parser use them (this module imports neither)."""


class TaskId:
    """A task id bound by `with pl.at(...) as tid`: a parse-time handle, not a run-time value."""

    def __init__(self, id, name):
        self.id, self.name = id, name

    def __repr__(self):
        return f"task id '{self.name}'"


class NoDep:
    """`pl.no_dep(t)` as a kernel argument: t's slot gets no dependency lookup or registration."""

    def __init__(self, value):
        self.value = value

    def __repr__(self):
        return "pl.no_dep(...)"


class SubmitResult(tuple):
    """`pl.submit(...)`'s value: the kernel's results followed by the launch's TaskId."""


_next_task_id = [0]


def new_task_id():
    """A fresh task id (ids are unique across parses, so printed programs can name them)."""
    _next_task_id[0] += 1
    return _next_task_id[0] - 1


def reserve_task_id(task_id):
    """Keeps later fresh ids above an id a printed program names explicitly (task_id=N)."""
    _next_task_id[0] = max(_next_task_id[0], task_id + 1)
