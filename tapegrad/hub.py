"""tapegrad.hub (PyTorch's torch.hub): entry points of a repository's hubconf.py, and cached downloads.

Downloads use urllib (any URL it opens: https, http, file); checkpoints are read with `tapegrad.load`,
which reads PyTorch's format, so the cache directory is PyTorch's own ($TORCH_HOME/hub, by default
~/.cache/torch/hub) and weights PyTorch downloaded are found there. A hubconf.py is ordinary Python:
one written for PyTorch imports torch, so its entry points build PyTorch modules; a repository for
tapegrad imports tapegrad. GitHub repositories are fetched as their zip archive; the ref is not checked
against forks (PyTorch asks GitHub's API; skip_validation is accepted and has nothing to skip).
"""
import contextlib
import hashlib
import importlib.util
import os
import re
import shutil
import sys
import tempfile
import uuid
import zipfile
from urllib.error import HTTPError, URLError
from urllib.parse import urlparse
from urllib.request import Request, urlopen
from ._user_frames import warn_user

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url", "set_dir"]

HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
_GITHUB_ARCHIVE = "https://github.com/{owner}/{name}/zipball/{ref}"   # where a repository's zip comes from
_GITHUB_TREE = "https://github.com/{owner}/{name}/tree/main/"
_TRUSTED_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")
_hub_dir = None


def _torch_home():
    return os.path.expanduser(os.getenv("TORCH_HOME", os.path.join(os.getenv("XDG_CACHE_HOME", "~/.cache"), "torch")))


def get_dir():
    """The hub cache directory: set_dir's, else $TORCH_HOME/hub ($TORCH_HOME defaults to ~/.cache/torch)."""
    if os.getenv("TORCH_HUB"):
        warn_user("TORCH_HUB is deprecated, please use env TORCH_HOME instead")
    return _hub_dir if _hub_dir is not None else os.path.join(_torch_home(), "hub")


def set_dir(d):
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


# ---- downloads -------------------------------------------------------------------------------------

def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Download url to the file dst (written beside it, then renamed); check its sha256 starts with hash_prefix."""
    dst = os.path.expanduser(dst)
    request = Request(url, headers={"User-Agent": "torch.hub"})
    with urlopen(request) as response:
        total = response.headers.get("Content-Length") if hasattr(response, "headers") else None
        folder, base = os.path.split(os.path.abspath(dst))
        tmp = os.path.join(folder, f".{base}.{uuid.uuid4().hex}.partial")
        digest = hashlib.sha256() if hash_prefix is not None else None
        done = 0
        try:
            with open(tmp, "wb") as out:
                while True:
                    chunk = response.read(1 << 16)
                    if not chunk:
                        break
                    out.write(chunk)
                    done += len(chunk)
                    if digest is not None:
                        digest.update(chunk)
                    if progress:
                        _progress(done, total)
            if progress:
                sys.stderr.write("\n")
            if digest is not None:
                found = digest.hexdigest()
                if found[:len(hash_prefix)] != hash_prefix:
                    raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{found}")')
            shutil.move(tmp, dst)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)


def _progress(done, total):
    if total:
        sys.stderr.write(f"\r{100 * done // int(total):3d}% {done}/{total} bytes")
    else:
        sys.stderr.write(f"\r{done} bytes")


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True, check_hash=False,
                             file_name=None, weights_only=False):
    """The object saved at url (a checkpoint), downloaded once into <hub dir>/checkpoints and read by tapegrad.load.
    check_hash: the file name's `-<sha256 prefix>.` part must match the download."""
    from .serialization import load
    if os.getenv("TORCH_MODEL_ZOO"):
        warn_user("TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead")
    model_dir = model_dir or os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name or os.path.basename(urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stderr.write(f'Downloading: "{url}" to {cached_file}\n')
        hash_prefix = None
        if check_hash:
            found = HASH_REGEX.search(filename)
            hash_prefix = found.group(1) if found else None
        download_url_to_file(url, cached_file, hash_prefix, progress=progress)
    if _is_legacy_zip(cached_file):
        return load(_legacy_zip_load(cached_file, model_dir), map_location=map_location, weights_only=weights_only)
    return load(cached_file, map_location=map_location, weights_only=weights_only)


def _is_legacy_zip(filename):
    """A zip holding one file (the format of old model zoo uploads), not a torch.save zip."""
    if zipfile.is_zipfile(filename):
        with zipfile.ZipFile(filename) as f:
            infos = f.infolist()
            return len(infos) == 1 and not infos[0].is_dir()
    return False


def _legacy_zip_load(filename, model_dir):
    with zipfile.ZipFile(filename) as f:
        member = f.infolist()[0]
        f.extractall(model_dir)
    return os.path.join(model_dir, member.filename)


# ---- repositories and their hubconf.py --------------------------------------------------------------

def load(repo_or_dir, model, *args, source="github", trust_repo="check", force_reload=False, verbose=True,
         skip_validation=False, **kwargs):
    """Call the entry point `model` of repo_or_dir's hubconf.py with args and kwargs.
    source='github': repo_or_dir is 'owner/name[:ref]', downloaded once into the hub dir;
    source='local': a directory."""
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        repo_or_dir = _get_cache_or_reload(repo_or_dir, force_reload, trust_repo, verbose)
    return _load_local(repo_or_dir, model, *args, **kwargs)


def list(github, force_reload=False, skip_validation=False, trust_repo="check", verbose=True):   # noqa: A001
    """The callable entry points of a GitHub repository's hubconf.py (names not starting with '_')."""
    hub_module = _hubconf(_get_cache_or_reload(github, force_reload, trust_repo, verbose))
    return [name for name in dir(hub_module) if callable(getattr(hub_module, name)) and not name.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False, trust_repo="check"):   # noqa: A001
    """The docstring of an entry point of a GitHub repository's hubconf.py."""
    hub_module = _hubconf(_get_cache_or_reload(github, force_reload, trust_repo, True))
    return _entry(hub_module, model).__doc__


def _load_local(hubconf_dir, model, *args, **kwargs):
    return _entry(_hubconf(hubconf_dir), model)(*args, **kwargs)


@contextlib.contextmanager
def _on_sys_path(path):
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def _hubconf(repo_dir):
    """Import repo_dir/hubconf.py (with repo_dir on sys.path, as its imports expect) and check its dependencies."""
    path = os.path.join(repo_dir, "hubconf.py")
    if not os.path.exists(path):
        raise FileNotFoundError(f"[Errno 2] No such file or directory: '{path}'")
    with _on_sys_path(repo_dir):
        spec = importlib.util.spec_from_file_location("hubconf", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        missing = [name for name in getattr(module, "dependencies", None) or ()
                   if importlib.util.find_spec(name) is None]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    return module


def _entry(module, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    func = getattr(module, model, None)
    if func is None or not callable(func):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return func


def _parse_repo_info(github):
    repo_info, _, ref = github.partition(":")
    owner, name = repo_info.split("/")
    if not ref:   # the default branch: main if it exists, else master
        try:
            with urlopen(_GITHUB_TREE.format(owner=owner, name=name)):
                ref = "main"
        except HTTPError as e:
            if e.code != 404:
                raise
            ref = "master"
        except URLError as e:
            cached = [r for r in ("main", "master") if os.path.exists(os.path.join(get_dir(), f"{owner}_{name}_{r}"))]
            ref = cached[0] if cached else None
            if ref is None:
                raise RuntimeError("It looks like there is no internet connection and the repo could not be found "
                                   f"in the cache ({get_dir()})") from e
    return owner, name, ref


def _get_cache_or_reload(github, force_reload, trust_repo, verbose):
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    owner, name, ref = _parse_repo_info(github)
    branch = ref.replace("/", "_")
    repo_dir = os.path.join(hub_dir, "_".join([owner, name, branch]))
    _check_trusted(owner, name, os.path.basename(repo_dir), trust_repo)
    if not force_reload and os.path.exists(repo_dir):
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    cached_zip = os.path.join(hub_dir, branch + ".zip")
    url = _GITHUB_ARCHIVE.format(owner=owner, name=name, ref=ref)
    sys.stdout.write(f'Downloading: "{url}" to {cached_zip}\n')
    download_url_to_file(url, cached_zip, progress=False)
    with tempfile.TemporaryDirectory(dir=hub_dir) as tmp, zipfile.ZipFile(cached_zip) as archive:
        top = archive.infolist()[0].filename.split("/")[0]   # GitHub's <owner>-<name>-<sha>/ folder
        archive.extractall(tmp)
        if os.path.exists(repo_dir):
            shutil.rmtree(repo_dir)
        shutil.move(os.path.join(tmp, top), repo_dir)
    os.remove(cached_zip)
    return repo_dir


def _check_trusted(owner, name, owner_name_branch, trust_repo):
    """PyTorch's trust check: the trusted_list file in the hub dir, repositories already downloaded, known owners."""
    hub_dir = get_dir()
    path = os.path.join(hub_dir, "trusted_list")
    trusted = ()
    if os.path.exists(path):
        with open(path) as f:
            trusted = tuple(line.strip() for line in f)
    owner_name = f"{owner}_{name}"
    is_trusted = owner_name in trusted or owner_name_branch in next(os.walk(hub_dir))[1] or owner in _TRUSTED_OWNERS
    if trust_repo is False or (trust_repo == "check" and not is_trusted):
        response = input(f"The repository {owner_name} does not belong to the list of trusted repositories and as "
                         "such cannot be downloaded. Do you trust this repository and wish to add it to the trusted "
                         "list of repositories (y/N)?")
        if response.lower() in ("y", "yes"):
            if is_trusted:
                print("The repository is already trusted.")
        elif response.lower() in ("n", "no", ""):
            raise Exception("Untrusted repository.")
        else:
            raise ValueError(f"Unrecognized response {response}.")
    if not is_trusted:
        with open(path, "a") as f:
            f.write(owner_name + "\n")
