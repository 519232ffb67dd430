"""The loss curve, drawn with matplotlib's object API (no pyplot state), saved as a PNG by the Agg backend."""


def _moving_average(values, window):
    out, total = [], 0.0
    for i, v in enumerate(values):
        total += v - (values[i - window] if i >= window else 0.0)
        out.append(total / min(i + 1, window))
    return out


def draw_loss(ax, losses, compiled_from=None):
    """Each step's loss and its moving average on ax; a line where the compiled step took over."""
    steps = range(1, len(losses) + 1)
    ax.plot(steps, losses, color="tab:blue", alpha=0.3, linewidth=0.8, label="loss per step")
    ax.plot(steps, _moving_average(losses, max(5, len(losses) // 20)), color="tab:blue", label="moving average")
    if compiled_from is not None and compiled_from < len(losses):
        ax.axvline(compiled_from + 0.5, color="tab:gray", linestyle="--", label="compiled step from here")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats per character)")
    ax.set_title("Character-level transformer on Python's help pages")
    ax.grid(alpha=0.3)
    ax.legend()


def save_loss_curve(losses, path, compiled_from=None):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    fig = Figure(figsize=(7, 4), dpi=100)
    FigureCanvasAgg(fig)
    draw_loss(fig.add_subplot(), losses, compiled_from)
    fig.tight_layout()
    fig.savefig(path)
    return path
