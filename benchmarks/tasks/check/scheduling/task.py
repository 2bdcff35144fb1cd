"""One machine, 40 jobs with integer weights 1-50 and processing times 1-30 (durations lognormal-ish), known
up front; jobs run in decreasing ``priority(weight, duration)`` order (ties in job order). The cost is the
weighted sum of completion times; the gap is its excess over the optimum (Smith's rule), in percent."""

import random

FILE = "priority.py"
FUNCTION = "priority"
TARGET = 1.0


def instance(seed):
    rng = random.Random(seed)
    return {
        "jobs": [[rng.randint(1, 50), min(30, max(1, round(rng.lognormvariate(2, 0.7))))] for _ in range(40)]
    }


def cost(order, jobs):
    clock, total = 0, 0
    for i in order:
        weight, duration = jobs[i]
        clock += duration
        total += weight * clock
    return total


def gap(priority, instance):
    jobs = instance["jobs"]
    order = sorted(range(len(jobs)), key=lambda i: -priority(jobs[i][0], jobs[i][1]))
    best = sorted(range(len(jobs)), key=lambda i: -jobs[i][0] / jobs[i][1])
    return 100 * (cost(order, jobs) - cost(best, jobs)) / cost(best, jobs)
