"""Warm starts: a second run of the same script loads its programs from the disk cache the first left.

Each run is a fresh Python process (the cache is per user, across processes); the training step's
programs are counted by tapegrad's counters, which tell compiles from loads by JAX's own events.
"""
import json
import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import json
    import tapegrad as torch
    from tapegrad import nn, _numpy_rent
    _numpy_rent.PLAN_COMPILE_SECONDS = _numpy_rent.PLAN_COMPILE_SECONDS_PER_STEP = 0.0   # compile when seen twice
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 3))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    x, y = torch.randn(4, 8), torch.tensor([0, 1, 2, 1])
    import warnings
    from tapegrad._recompiles import RecompileWarning
    warnings.simplefilter("error", RecompileWarning)   # a program loaded from disk is no new compile to explain
    losses = []
    for _ in range(12):
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    import jax
    info = torch.autograd.backward_cache_info()
    print(json.dumps({"compiles": info["compiles"], "disk_loads": info["disk_loads"], "losses": losses,
                      "cache_dir": jax.config.jax_compilation_cache_dir}))
""")


def _run(env_cache, tmp_path, extra_env=None):
    env = dict(os.environ, TAPEGRAD_COMPILATION_CACHE=env_cache, **(extra_env or {}))
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, cwd=tmp_path, capture_output=True, text=True,
                         timeout=300, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_second_run_loads_what_the_first_compiled(tmp_path):
    cache = tmp_path / "xla"
    cold = _run(str(cache), tmp_path)
    warm = _run(str(cache), tmp_path)
    assert cold["compiles"] > 0 and cold["disk_loads"] == 0
    assert warm["compiles"] == 0, warm
    assert warm["disk_loads"] == cold["compiles"]
    assert warm["losses"] == cold["losses"]
    assert any(cache.iterdir())


def test_off_compiles_everything_and_writes_nothing(tmp_path):
    home = tmp_path / "home"
    run = _run("off", tmp_path, {"HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache")})
    assert run["cache_dir"] is None
    assert run["compiles"] > 0 and run["disk_loads"] == 0
    assert not home.exists()


def _cache_dir_at_import(env):
    out = subprocess.run([sys.executable, "-c", "import jax, tapegrad; print(jax.config.jax_compilation_cache_dir)"],
                         env=dict(os.environ, **env), capture_output=True, text=True, timeout=300, check=True)
    return out.stdout.strip()


def test_default_directory_is_per_user_under_the_cache_home(tmp_path):
    home = tmp_path / "home"
    found = _cache_dir_at_import({"TAPEGRAD_COMPILATION_CACHE": "", "XDG_CACHE_HOME": str(home / ".cache")})
    assert found == str(home / ".cache" / "tapegrad" / "xla")


def test_a_cache_configured_in_jax_is_left_as_it_is(tmp_path):
    theirs = tmp_path / "jax-cache"
    found = _cache_dir_at_import({"JAX_COMPILATION_CACHE_DIR": str(theirs),
                                  "TAPEGRAD_COMPILATION_CACHE": str(tmp_path / "ours")})
    assert found == str(theirs)
    assert not (tmp_path / "ours").exists()


def test_trim_drops_least_recently_used_entries_down_to_the_bound(tmp_path):
    """The cache is bounded by tapegrad at exit, not by JAX at every write (whose eviction reads every
    entry's access time per write); an entry's access-time file (JAX's eviction's) goes with it."""
    from tapegrad import _warm_start
    for k in range(6):
        entry = tmp_path / f"k{k}-cache"
        entry.write_bytes(b"x" * 100)
        os.utime(entry, (1_000_000 + k, 1_000_000 + k))   # k0 least recently used
        (tmp_path / f"k{k}-atime").write_bytes(b"\0" * 8)
    assert _warm_start.trim(str(tmp_path), max_bytes=350) == 3
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == [
        "k3-atime", "k3-cache", "k4-atime", "k4-cache", "k5-atime", "k5-cache"]
    (tmp_path / "k9-cache").write_bytes(b"x" * 1000)
    assert _warm_start.trim(str(tmp_path), max_bytes=350) is None   # trimmed a moment ago: skipped
    # the older three go first, then the newest too: it alone is over the bound
    assert _warm_start.trim(str(tmp_path), max_bytes=350, every=0) == 4
    assert not [p for p in tmp_path.iterdir() if not p.name.startswith(".")]
    assert not _warm_start.trim(str(tmp_path / "missing"), every=0)


def test_jax_does_no_eviction_scan_per_write(tmp_path):
    out = subprocess.run([sys.executable, "-c", "import jax, tapegrad; print(jax.config.jax_compilation_cache_max_size)"],
                         env=dict(os.environ, TAPEGRAD_COMPILATION_CACHE=str(tmp_path / "xla")), capture_output=True,
                         text=True, timeout=300, check=True)
    assert out.stdout.strip() == "-1"
