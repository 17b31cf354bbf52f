"""Faults and defences drawn on a time axis: a figure shows what began a storm and what ended it."""

from lockstep_analysis.run_file import load_table, tables

# Beyond this many, labels would cover the figure (story 9 restarts hundreds of times).
MAX_MARKS = 12


def mark_incidents(ax, path, ps_per_unit, labelled=True):
    """A dashed line where each fault began and a dotted one where it ended, a solid one where a
    defence acted, labelled at the top of `ax` unless `labelled` is false (a second panel of the
    same times); x in units of `ps_per_unit` picoseconds. Call it once the x limits are set: marks
    outside them are left out."""
    names = set(tables(path))
    marks = []
    if "faults" in names:
        for fault in load_table(path, "faults").itertuples():
            marks.append((fault.start_ps, f"{fault.kind} {fault.target}", "--"))
            if fault.end_ps >= 0:
                marks.append((fault.end_ps, f"{fault.kind} ends", ":"))
    if "defences" in names:
        for action in load_table(path, "defences").itertuples():
            marks.append((action.at_ps, f"{action.defence} ({action.target})", "-"))
    # A storm a watchdog ended ends when the watchdog acts: one line, both labels.
    at_once = {}
    for at_ps, label, style in sorted(marks):
        at_once.setdefault(at_ps, ([], style))[0].append(label)
    low, high = ax.get_xlim()
    shown = [(at_ps / ps_per_unit, labels, style) for at_ps, (labels, style) in at_once.items()
             if low <= at_ps / ps_per_unit <= high]
    for x, labels, style in shown[:MAX_MARKS]:
        ax.axvline(x, color="black", linestyle=style, linewidth=1)
        if not labelled:
            continue
        ax.annotate("; ".join(labels), (x, 1), xycoords=("data", "axes fraction"), xytext=(3, -3),
                    textcoords="offset points", rotation=90, va="top", ha="left", fontsize=8,
                    bbox={"boxstyle": "round,pad=0.2", "facecolor": "white", "alpha": 0.7,
                          "linewidth": 0})
