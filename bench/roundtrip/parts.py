#!/usr/bin/env python3
"""bench/roundtrip/parts.py - a run's CPU by part, from `perf sched record`.

    perf script -i FILE -F comm,pid,tid,event,trace | parts.py RUNS

Sums each task's sched_stat_runtime (the scheduler's own accounting of the
time it ran: exact, unlike samples, which on a hypervisor land after the
fault or system call that cost them) and gives each task to a part of the
run by the sched_process_fork tree: the launcher is the task that forked
the most; its children are supervisors; a supervisor's children that clone
are its two waiting threads (the init's, then the file actor's), whose
children are the init and the actor's waiting half; the init's child is the
command; a supervisor's child that clones nothing is the idmap
helper.  Everything else goes by its name.  Prints milliseconds per run.
"""
import collections
import re
import sys

RUNTIME = re.compile(r"sched_stat_runtime: comm=(.*?) pid=(\d+) runtime=(\d+)")
COMMAND = "the command (and what it starts)"
WAITING = ("the init's waiting thread (namespaces; teardown if last)",
           "the file actor's waiting thread (teardown if last)")
FORK = re.compile(r"(\d+)/(\d+)\s+sched:sched_process_fork: .*child_pid=(\d+)")


def main():
    runs = int(sys.argv[1])
    ran = collections.Counter()
    names = collections.defaultdict(set)
    children = collections.defaultdict(list)
    for line in sys.stdin:
        m = RUNTIME.search(line)
        if m:
            tid = int(m.group(2))
            ran[tid] += int(m.group(3))
            names[tid].add(m.group(1))
            continue
        m = FORK.search(line)
        if m:
            children[int(m.group(2))].append(int(m.group(3)))
    if not children:
        sys.exit("parts.py: no fork events (was it recorded with perf sched record?)")
    launcher = max(children, key=lambda t: len(children[t]))
    part = {launcher: "the launcher"}
    for sup in children[launcher]:
        part[sup] = "the supervisor (its main thread)"
        waiting = [c for c in children[sup] if children[c]]
        for c in children[sup]:
            if not children[c]:
                part[c] = "the idmap helper"
        for i, w in enumerate(waiting):
            part[w] = WAITING[min(i, 1)]
            for g in children[w]:
                if i > 0:
                    part[g] = "the file actor"
                    continue
                part[g] = "the init"
                todo = list(children[g])  # the command and everything it starts
                while todo:
                    t = todo.pop()
                    part[t] = COMMAND
                    todo += children[t]
    total = collections.Counter()
    for tid, ns in ran.items():
        name = "/".join(sorted(names[tid]))
        p = part.get(tid)
        if p is None:
            if name.startswith("sharnessd-front"):
                p = "the front"
            elif "bash" in name or name == "true":  # a run whose sandbox was built before the window
                p = COMMAND
            elif "sharness-actor" in name:
                p = "the file actor"
            elif "sharnessd" in name:
                p = "sharnessd's tasks forked before the window"
            elif name.startswith(("kworker", "ksoftirqd", "rcu_", "kcompactd", "migration")):
                p = "kernel workers, RCU, softirqs"
            elif name.startswith(("roundtrip", "perf")):
                p = "the benchmark's client and perf"
            else:
                p = "other processes"
        total[p] += ns
    for p, ns in total.most_common():
        print("  %-58s %7.2f ms" % (p, ns / 1e6 / runs))
    print("  %-58s %7.2f ms" % ("all", sum(total.values()) / 1e6 / runs))


if __name__ == "__main__":
    main()
