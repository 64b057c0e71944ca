"""The one table every benchmark adds its targets to: the figure, the peer or floor it is
measured against in the same run, their ratio and whether the target is met."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Target:
    """One target: `figure` against `peer`, their ratio checked against `goal`.

    `higher` says which way is better: a throughput ratio must reach the goal (>=), a
    latency or cost ratio must stay within it (<=). `peer` None means the peer is
    missing in this run, so the target is skipped, not failed; `goal` None makes the
    row a figure reported beside its peer, with no verdict."""

    name: str
    figure: float
    unit: str
    peer: float | None
    peer_name: str
    goal: float | None
    higher: bool = True

    @property
    def ratio(self) -> float | None:
        return None if self.peer is None else self.figure / self.peer

    @property
    def verdict(self) -> str:
        if self.goal is None:
            return "report"
        if self.ratio is None:
            return "skip"
        met = self.ratio >= self.goal if self.higher else self.ratio <= self.goal
        return "pass" if met else "FAIL"


def number(value: float) -> str:
    """Three significant figures, thousands separated."""
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def print_targets(targets: list[Target], heading: str = "targets") -> None:
    """One row per target: name, figure, peer or floor, ratio, goal, pass/FAIL/skip."""
    name_width = max(len(target.name) for target in targets) + 2
    peer_width = max(len(target.peer_name) for target in targets) + 2
    print(f"\n{heading:<{name_width}}{'figure':>16}  {'peer or floor':<{peer_width}}"
          f"{'peer':>14}{'ratio':>8}{'goal':>8}  result")  # fmt: skip
    for target in targets:
        peer = "missing" if target.peer is None else f"{number(target.peer)} {target.unit}"
        ratio = "-" if target.ratio is None else f"{target.ratio:.2f}"
        goal = "-" if target.goal is None else f"{'>=' if target.higher else '<='}{target.goal:g}"
        print(
            f"{target.name:<{name_width}}{number(target.figure) + ' ' + target.unit:>16}  "
            f"{target.peer_name:<{peer_width}}{peer:>14}{ratio:>8}{goal:>8}  {target.verdict}"
        )
