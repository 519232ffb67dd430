"""PyTorch's torch.multiprocessing.spawn: run fn(i, *args) in nprocs new processes, and re-raise in the
parent the first error a child raised (with the child's traceback) or the exit code it died with."""
import multiprocessing
import multiprocessing.connection
import traceback


class ProcessException(Exception):
    def __init__(self, msg, error_index, pid):
        super().__init__(msg)
        self.msg, self.error_index, self.pid = msg, error_index, pid

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid)


class ProcessRaisedException(ProcessException):
    """A child raised an exception: the message holds its traceback."""


class ProcessExitedException(ProcessException):
    """A child exited with a non-zero code (or was killed by a signal)."""

    def __init__(self, msg, error_index, error_pid, exit_code, signal_name=None):
        super().__init__(msg, error_index, error_pid)
        self.exit_code, self.signal_name = exit_code, signal_name

    def __reduce__(self):
        return type(self), (self.msg, self.error_index, self.pid, self.exit_code, self.signal_name)


def _wrap(fn, i, args, errors):
    try:
        fn(i, *args)
    except KeyboardInterrupt:
        pass
    except Exception:
        errors.put((i, traceback.format_exc()))
        raise SystemExit(1)


class ProcessContext:
    def __init__(self, processes, errors):
        self.processes, self._errors = processes, errors

    def pids(self):
        return [p.pid for p in self.processes]

    def join(self, timeout=None):
        """True once every process has ended well; raise as soon as one failed (stopping the others)."""
        alive = [p for p in self.processes if p.exitcode is None]
        if alive:
            multiprocessing.connection.wait([p.sentinel for p in alive], timeout=timeout)
        failed = next((i for i, p in enumerate(self.processes) if p.exitcode not in (None, 0)), None)
        if failed is None:
            return all(p.exitcode == 0 for p in self.processes)
        for p in self.processes:
            if p.is_alive():
                p.terminate()
            p.join()
        process = self.processes[failed]
        if not self._errors.empty():
            index, text = self._errors.get()
            raise ProcessRaisedException(f"\n\n-- Process {index:d} terminated with the following error:\n{text}",
                                         index, self.processes[index].pid)
        code = process.exitcode
        raise ProcessExitedException(f"process {failed:d} terminated with exit code {code:d}", failed,
                                     process.pid, code)


def start_processes(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    context = multiprocessing.get_context(start_method)
    errors = context.SimpleQueue()
    processes = []
    for i in range(nprocs):
        p = context.Process(target=_wrap, args=(fn, i, args, errors), daemon=daemon)
        p.start()
        processes.append(p)
    procs = ProcessContext(processes, errors)
    if not join:
        return procs
    while not procs.join():
        pass


def spawn(fn, args=(), nprocs=1, join=True, daemon=False, start_method="spawn"):
    """Start nprocs processes running fn(i, *args) (i = 0 .. nprocs-1); with join=True wait for them all,
    raising ProcessRaisedException (the child's traceback) or ProcessExitedException if one failed.
    Children are spawned, so fn and args must be picklable (a module-level function)."""
    return start_processes(fn, args, nprocs, join, daemon, start_method)
