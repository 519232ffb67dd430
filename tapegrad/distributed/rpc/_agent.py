"""The RPC agent: one per process, TCP sockets between workers, a thread pool that runs incoming calls.

Rendezvous: rank 0 serves a small store on MASTER_ADDR:MASTER_PORT (or the tcp:// init_method); every
worker opens its own listening socket, registers (name, rank, address) there and gets the table of all
workers back. The store also serves the shutdown barrier. Calls go over one outgoing connection per
peer (made at first use, a reader thread completing the futures of its responses); each incoming
connection has a reader thread that hands requests to the pool, so a call may itself make calls (to
any worker, this one included) without blocking the transport.
"""
import heapq
import itertools
import os
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlparse

from ...futures import Future
from . import _serialize
from .options import WorkerInfo

_ids = itertools.count()


def _connect_retrying(host, port, timeout):
    deadline = time.monotonic() + timeout
    while True:
        try:
            sock = socket.create_connection((host, port), timeout=5)
            sock.settimeout(None)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return sock
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"init_rpc could not reach the rendezvous at {host}:{port} within {timeout} s. "
                                   "Start the worker of rank 0 too, and give every worker the same MASTER_ADDR "
                                   "and MASTER_PORT.") from None
            time.sleep(0.05)


def master_address(init_method):
    if init_method in (None, "env://"):
        missing = [k for k in ("MASTER_ADDR", "MASTER_PORT") if k not in os.environ]
        if missing:
            raise ValueError(f"Error initializing torch.distributed using env:// rendezvous: environment variable "
                             f"{missing[0]} expected, but not set. Set MASTER_ADDR and MASTER_PORT (as torchrun "
                             "does), or pass init_method='tcp://host:port' in the backend options.")
        return os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
    url = urlparse(init_method)
    if url.scheme != "tcp" or url.port is None:
        raise ValueError(f"init_method {init_method!r} is not supported: use 'env://' or 'tcp://host:port'.")
    return url.hostname, url.port


class _Store(threading.Thread):
    """Rank 0's rendezvous: collects the workers' addresses, then answers barriers until they leave."""

    def __init__(self, host, port, world_size):
        super().__init__(daemon=True, name="tapegrad-rpc-store")
        try:
            self.server = socket.create_server((host, port))
        except OSError as exc:
            raise RuntimeError(f"The server socket has failed to listen on {host}:{port} ({exc.strerror}). "
                               "Another program holds MASTER_PORT: pick a free port.") from None
        self.world_size = world_size

    def run(self):
        conns, entries = [], []
        try:
            while len(conns) < self.world_size:
                conn, _ = self.server.accept()
                conns.append(conn)
                entries.append(_serialize.recv_frame(conn))
            error = _check_table(entries)
            for conn in conns:
                _serialize.send_frame(conn, ("error", error) if error else ("table", entries))
            while True:   # barriers: one message from every worker, then release them all
                if any(_serialize.recv_frame(conn) is None for conn in conns):
                    return
                for conn in conns:
                    _serialize.send_frame(conn, "go")
        except OSError:
            return
        finally:
            for conn in conns:
                conn.close()
            self.server.close()


def _check_table(entries):
    names, ranks = [e[0] for e in entries], [e[1] for e in entries]
    if len(set(names)) != len(names):
        return f"RPC worker names must be unique, got {names}. Give every init_rpc a different name."
    if sorted(ranks) != list(range(len(ranks))):
        return (f"RPC worker ranks must be 0 .. world_size-1, each once, got {sorted(ranks)}. "
                "Give every init_rpc its own rank.")
    return None


class Agent:
    """The process's RPC endpoint: the worker table, connections, pending calls, the pool."""

    def __init__(self, name, rank, world_size, options):
        self.options = options
        host, port = master_address(options.init_method)
        self.store = _Store(host, port, world_size) if rank == 0 else None
        if self.store is not None:
            self.store.start()
        self.store_sock = _connect_retrying(host, port, options.rpc_timeout)
        local_host = self.store_sock.getsockname()[0]
        self.listener = socket.create_server((local_host, 0))
        _serialize.send_frame(self.store_sock, (name, rank, local_host, self.listener.getsockname()[1]))
        reply = _serialize.recv_frame(self.store_sock)
        if reply is None or reply[0] == "error":
            self.store_sock.close()
            self.listener.close()
            raise RuntimeError(reply[1] if reply else "The RPC rendezvous closed before every worker joined.")
        self.addresses = {r: (h, p) for _, r, h, p in reply[1]}
        self.workers = {r: WorkerInfo(n, r) for n, r, _, _ in reply[1]}
        self.by_name = {info.name: info for info in self.workers.values()}
        self.info = self.workers[rank]
        self.pool = ThreadPoolExecutor(options.num_worker_threads, thread_name_prefix=f"tapegrad-rpc-{name}")
        self.lock = threading.Condition()
        self.outgoing = {}   # worker id -> socket
        self.send_locks = {}
        self.pending = {}    # call id -> (future, context, worker id)
        self.deadlines = []  # heap of (deadline, call id)
        self.incoming = []
        self.owned = {}      # rref id -> Future of the value this worker owns
        self.rref_ids = itertools.count()
        self.message_ids = itertools.count()
        self.closing = False
        # threads that run tapegrad (JAX) code: close() joins them, since a daemon thread still inside
        # JAX's C++ when the interpreter exits aborts the process ("FATAL: exception not rethrown")
        self.threads = []
        self._start(self._accept, "tapegrad-rpc-accept")
        threading.Thread(target=self._watch_timeouts, daemon=True, name="tapegrad-rpc-timeouts").start()

    def _start(self, target, name, *args):
        thread = threading.Thread(target=target, args=args, daemon=True, name=name)
        with self.lock:
            self.threads.append(thread)
        thread.start()

    # ---- naming ----------------------------------------------------------------------------------

    def resolve(self, to):
        if isinstance(to, WorkerInfo):
            to = to.name
        info = self.workers.get(to) if isinstance(to, int) else self.by_name.get(to)
        if info is None:
            raise RuntimeError(f"name:{self.info.name},rank:{self.info.id} could not find destination name {to}. "
                               f"The workers are {sorted(self.by_name)}.")
        return info

    def new_message_id(self):
        return (self.info.id, next(self.message_ids))

    # ---- calling ---------------------------------------------------------------------------------

    def call(self, to, func, args, kwargs, timeout, context):
        """Send func(*args, **kwargs) to worker `to`; a Future of its result. Tensors that require grad
        are recorded in `context` (a distributed autograd context, or None)."""
        dest = self.resolve(to)
        if self.closing and self.store_sock is None:
            raise RuntimeError("RPC has already been shut down on this worker. Call rpc functions between "
                               "init_rpc and shutdown.")
        payload, sends = _serialize.dumps((func, tuple(args or ()), dict(kwargs or {})), context is not None)
        message_id = None
        if context is not None:
            context.known_workers.add(dest.id)
            if sends:
                message_id = self.new_message_id()
                context.record_send(message_id, sends)
        fut = Future()
        call_id = next(_ids)
        timeout = self.options.rpc_timeout if timeout is None or timeout < 0 else timeout
        with self.lock:
            self.pending[call_id] = (fut, context, dest.id, timeout)
            if timeout > 0:
                heapq.heappush(self.deadlines, (time.monotonic() + timeout, call_id))
                self.lock.notify_all()
        try:
            self._send(dest.id, ("req", call_id, self.info.id, context.id if context is not None else None,
                                 message_id, payload))
        except OSError as exc:
            self._finish(call_id, error=RuntimeError(f"RPC to {dest} failed: {exc}. The worker may have exited."))
        return fut

    def _send(self, worker, message):
        with self.lock:
            sock = self.outgoing.get(worker)
            if sock is None:
                sock = _connect_retrying(*self.addresses[worker], self.options.rpc_timeout)
                self.outgoing[worker] = sock
                self.send_locks[worker] = threading.Lock()
                self._start(self._read_responses, "tapegrad-rpc-responses", sock)
            send_lock = self.send_locks[worker]
        with send_lock:
            _serialize.send_frame(sock, message)

    def _read_responses(self, sock):
        while True:
            message = _serialize.recv_frame(sock)
            if message is None:
                return
            _, call_id, ok, message_id, payload = message
            with self.lock:
                entry = self.pending.get(call_id)
            if entry is None:   # timed out already
                continue
            fut, context, sender, _ = entry
            if ok:
                try:
                    value = _serialize.loads(payload, context, sender, message_id)
                except Exception as exc:
                    self._finish(call_id, error=exc)
                else:
                    self._finish(call_id, value=value)
            else:
                self._finish(call_id, error=_serialize.unpack_error(*payload))

    def _finish(self, call_id, value=None, error=None):
        with self.lock:
            entry = self.pending.pop(call_id, None)
            self.lock.notify_all()
        if entry is None:
            return
        if error is not None:
            entry[0].set_exception(error)
        else:
            entry[0].set_result(value)

    def _watch_timeouts(self):
        with self.lock:
            while not (self.closing and self.store_sock is None):
                now = time.monotonic()
                while self.deadlines and (self.deadlines[0][0] <= now or self.deadlines[0][1] not in self.pending):
                    _, call_id = heapq.heappop(self.deadlines)
                    entry = self.pending.get(call_id)
                    if entry is not None:
                        error = RuntimeError(f"RPC ran for more than set timeout ({int(entry[3] * 1000)} ms) and "
                                             "will now be marked with an error. Pass a longer timeout, or 0 for none.")
                        self.lock.release()
                        try:
                            self._finish(call_id, error=error)
                        finally:
                            self.lock.acquire()
                self.lock.wait(min(self.deadlines[0][0] - now, 1.0) if self.deadlines else 1.0)

    # ---- serving ---------------------------------------------------------------------------------

    def _accept(self):
        while True:
            try:
                sock, _ = self.listener.accept()
            except OSError:
                return
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self.lock:
                self.incoming.append(sock)
            self._start(self._read_requests, "tapegrad-rpc-requests", sock)

    def _read_requests(self, sock):
        send_lock = threading.Lock()
        while True:
            message = _serialize.recv_frame(sock)
            if message is None:
                return
            try:
                self.pool.submit(self._serve, sock, send_lock, *message[1:])
            except RuntimeError:   # shut down meanwhile: no call is pending any more
                return

    def _serve(self, sock, send_lock, call_id, sender, context_id, message_id, payload):
        from ..autograd import _context
        context = _context.received_context(context_id, sender)
        try:
            func, args, kwargs = _serialize.loads(payload, context, sender, message_id)
            with _context.running_in(context):
                result = func(*args, **kwargs)
            if is_async(func) or isinstance(result, AsyncResult):
                fut = result.future if isinstance(result, AsyncResult) else result
                if not isinstance(fut, Future):
                    raise TypeError(f"Functions decorated with @rpc.functions.async_execution must return a "
                                    f"torch.futures.Future object, but got {type(fut).__name__}.")
                fut.add_done_callback(lambda f: self._reply(sock, send_lock, call_id, context, f))
                return
        except BaseException as exc:
            result = Future()
            result.set_exception(exc)
        else:
            done = Future()
            done.set_result(result)
            result = done
        self._reply(sock, send_lock, call_id, context, result)

    def _reply(self, sock, send_lock, call_id, context, fut):
        try:
            value = fut.value()
            payload, sends = _serialize.dumps(value, context is not None)
            message_id = None
            if sends:
                message_id = self.new_message_id()
                context.record_send(message_id, sends)
            message = ("resp", call_id, True, message_id, payload)
        except BaseException as exc:
            message = ("resp", call_id, False, None, _serialize.pack_error(exc, self.info))
        try:
            with send_lock:
                _serialize.send_frame(sock, message)
        except OSError:
            pass   # the caller is gone: nobody waits for this answer

    # ---- owned values (RRefs) ----------------------------------------------------------------------

    def owned_future(self, rref_id):
        with self.lock:
            fut = self.owned.get(rref_id)
            if fut is None:
                fut = self.owned[rref_id] = Future()
            return fut

    # ---- shutdown --------------------------------------------------------------------------------

    def wait_idle(self):
        with self.lock:
            while self.pending:
                self.lock.wait(0.5)

    def barrier(self):
        _serialize.send_frame(self.store_sock, "barrier")
        if _serialize.recv_frame(self.store_sock) != "go":
            raise RuntimeError("An RPC worker left before the shutdown barrier. Every worker must call "
                               "rpc.shutdown().")

    def close(self):
        with self.lock:
            self.closing = True
            socks = list(self.outgoing.values()) + self.incoming
            store_sock, self.store_sock = self.store_sock, None
            self.lock.notify_all()
        try:
            self.listener.shutdown(socket.SHUT_RDWR)   # wakes the accepting thread (close alone does not)
        except OSError:
            pass
        self.listener.close()
        for sock in socks + [store_sock]:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
        self.pool.shutdown(wait=True)
        with self.lock:
            threads = list(self.threads)
        for thread in threads:
            if thread is not threading.current_thread():
                thread.join(timeout=5)
        if self.store is not None:
            self.store.join(timeout=5)


class AsyncResult:
    """A call's result that is a Future to answer with once complete (a method of an RRef's value
    decorated with @async_execution, reached through a proxy)."""
    __slots__ = ("future",)

    def __init__(self, future):
        self.future = future


def is_async(func):
    return getattr(func, "_wrapped_async_rpc_function", None) is not None
