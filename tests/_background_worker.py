"""A worker script run in a subprocess (8 simulated CPU devices need their own process), started when its test
module starts so that it runs while the module's other tests do; `result()` waits for its JSON."""
import json
import os
import subprocess
import sys


class BackgroundWorker:
    def __init__(self, script, *args):
        env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(script))),
                   JAX_PLATFORMS="cpu")
        self._process = subprocess.Popen([sys.executable, str(script), *map(str, args)], stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True, env=env)
        self._result = None

    def result(self):
        if self._result is None:
            out, err = self._process.communicate(timeout=300)
            assert self._process.returncode == 0, err[-3000:]
            self._result = json.loads(out)
        return self._result

    def stop(self):
        if self._process.poll() is None:
            self._process.kill()
            self._process.communicate()
