"""Hand-written JAX versions of the workloads: jax.jit of value_and_grad plus the update.

This is the practical speed limit for an engine built on JAX.
"""
import jax
import jax.numpy as jnp

from .models import LR, D, HEADS, VOCAB, CHAIN_OPS


def mlp_loss(params, x, y):
    h = x
    for i in range(0, len(params) - 2, 2):
        h = jax.nn.relu(h @ params[i].T + params[i + 1])
    logits = h @ params[-2].T + params[-1]
    logp = jax.nn.log_softmax(logits)
    return -jnp.take_along_axis(logp, y[:, None], axis=1).mean()


@jax.jit
def mlp_step_sgd(params, x, y):
    loss, grads = jax.value_and_grad(mlp_loss)(params, x, y)
    return [p - LR * g for p, g in zip(params, grads)], loss


@jax.jit
def mlp_step_momentum(params, bufs, x, y):
    loss, grads = jax.value_and_grad(mlp_loss)(params, x, y)
    bufs = [0.9 * b + g for b, g in zip(bufs, grads)]
    return [p - LR * b for p, b in zip(params, bufs)], bufs, loss


def chain_loss(x):
    y = x
    for _ in range(CHAIN_OPS // 4):
        y = jnp.tanh(jnp.sin(y * 1.01) + 0.5)
    return y.sum()


chain_grad = jax.jit(jax.grad(chain_loss))


def _layer_norm(h, w, b):
    mu = h.mean(-1, keepdims=True)
    var = ((h - mu) ** 2).mean(-1, keepdims=True)
    return (h - mu) / jnp.sqrt(var + 1e-5) * w + b


def transformer_loss(p, tokens, targets):
    B, T = tokens.shape
    h = p["embed.weight"][tokens] + p["pos"]
    qkv = _layer_norm(h, p["ln1.weight"], p["ln1.bias"]) @ p["qkv.weight"].T + p["qkv.bias"]
    q, k, v = jnp.split(qkv, 3, axis=-1)
    heads = lambda t: t.reshape(B, T, HEADS, D // HEADS).transpose(0, 2, 1, 3)
    q, k, v = heads(q), heads(k), heads(v)
    att = jax.nn.softmax(q @ k.transpose(0, 1, 3, 2) * (1.0 / (D // HEADS) ** 0.5), axis=-1)
    a = (att @ v).transpose(0, 2, 1, 3).reshape(B, T, D)
    h = h + a @ p["proj.weight"].T + p["proj.bias"]
    f = jax.nn.gelu(_layer_norm(h, p["ln2.weight"], p["ln2.bias"]) @ p["fc1.weight"].T + p["fc1.bias"],
                    approximate=False)
    h = h + f @ p["fc2.weight"].T + p["fc2.bias"]
    logits = (h @ p["head.weight"].T + p["head.bias"]).reshape(-1, VOCAB)
    logp = jax.nn.log_softmax(logits)
    return -jnp.take_along_axis(logp, targets.reshape(-1)[:, None], axis=1).mean()


@jax.jit
def transformer_step_adamw(p, m, v, t, tokens, targets, lr=1e-3, b1=0.9, b2=0.999, eps=1e-8, wd=0.01):
    loss, g = jax.value_and_grad(transformer_loss)(p, tokens, targets)
    t = t + 1
    new_p, new_m, new_v = {}, {}, {}
    for k in p:
        pk = p[k] * (1 - lr * wd)
        new_m[k] = b1 * m[k] + (1 - b1) * g[k]
        new_v[k] = b2 * v[k] + (1 - b2) * g[k] ** 2
        mhat = new_m[k] / (1 - b1 ** t)
        vhat = new_v[k] / (1 - b2 ** t)
        new_p[k] = pk - lr * mhat / (jnp.sqrt(vhat) + eps)
    return new_p, new_m, new_v, t, loss
