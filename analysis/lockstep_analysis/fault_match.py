"""Which injected fault a finding matches, for a simulated run that had some (`faults`).

The diagnosis never reads the faults to find a cause; this only tells someone studying a faulted
scenario that what the measurements pointed at is what was broken, by comparing a finding's targets
("gpu 77", "nic 21", "node 9", "cable host10-rail2") with each fault's target.
"""

import re

# Faults that have no single target ("cluster"), and the findings that are their signature.
CLUSTER_WIDE = {"nccl_socket": {"nccl_socket", "gpudirect_off"},
                "slow_storage": {"storage_wait", "checkpoint_stall"}}


def fault_targets(target):
    """{"rank 5", "gpu 13"} from a faults-table target such as `rank 5 (gpu 13)`."""
    return {" ".join(m) for m in re.findall(r"(rank|gpu|node|nic|cable) (\S+?)\)?(?=\s|\(|$)",
                                            target)}


def annotate(findings, faults):
    """Appends "matches injected fault: ..." to the evidence of the findings a fault explains."""
    if faults is None or faults.empty:
        return
    described = [(kind, target, fault_targets(target), detail)
                 for kind, target, detail in zip(faults["kind"], faults["target"],
                                                 faults["detail"])]
    for finding in findings:
        matched = {}  # a flapping cable has a row per down interval: named once
        for kind, target, targets, detail in described:
            explains = (finding.finding in CLUSTER_WIDE.get(kind, ()) if target == "cluster"
                        else bool(targets & finding.targets))
            if explains:
                matched.setdefault(f"{kind} on {target}", detail)
        if matched:
            finding.evidence += "; matches injected fault: " + ", ".join(
                f"{fault} ({detail})" for fault, detail in matched.items())
