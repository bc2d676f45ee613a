"""Extremal functions: the minimax lower bound of Theorem 1's rate, and a test of each decoder.

A bump of half-width ``~ h`` on a data point inside the widest gap the stragglers leave has error
``~ A`` there while ``||g''||^2 ~ A^2 / h^3``: its normalised loss ``R / ||g''||^2 ~ h^3 / K`` with
``h ~ (S + 1) / N`` attains the bound. Two families: the **lower-bound family**
(:data:`LOWER_BOUND_FUNCTION`, no received worker sees the bump, so every linear decoder has the
closed-form loss ``mean_k g(x_k)^2``: exponents ``tight`` or ``violated``, never ``loose``) and the
**decoder test** (:data:`DECODER_TEST_FUNCTION`, half-widths 2-4 times the room: the received
workers see its flanks); :mod:`~gcc.experiments.extremal_report` reports them.
"""
from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

import gcc
from gcc.codes import canonical, make
from gcc.validation import check_real

from .problems import as_matrix
from .slopes import as_rate_slopes, joint_fit, path_slopes, sweep_slopes

__all__ = ["PROFILE_ENERGY", "Bump", "line_inputs", "gap_room", "hardest_data_point", "bump_for", "hiding_block",
           "check_line", "sweep_cells", "extremal_sweep",
           "extremal_summary", "extremal_slopes", "EXTREMAL_FUNCTION", "LOWER_BOUND_FUNCTION",
           "DECODER_TEST_FUNCTION", "FAMILIES"]

_PROFILE = np.polynomial.Polynomial([1.0, 0.0, -1.0]) ** 4  # (1 - s^2)^4 on [-1, 1]
_D1, _D2 = _PROFILE.deriv(1), _PROFILE.deriv(2)


def _sup_abs(poly) -> float:
    """``max |poly|`` on [-1, 1]: at an end point or at a real critical point inside."""
    crit = poly.deriv().roots()
    crit = crit[np.isreal(crit)].real
    pts = np.concatenate([[-1.0, 1.0], crit[np.abs(crit) <= 1.0]])
    return float(np.max(np.abs(poly(pts))))


#: ``int_{-1}^{1} phi''(s)^2 ds`` of the profile ``phi(s) = (1 - s^2)^4`` (exact)
PROFILE_ENERGY = float((_D2 ** 2).integ()(1.0) - (_D2 ** 2).integ()(-1.0))
_SUP_D1, _SUP_D2 = _sup_abs(_D1), _sup_abs(_D2)

#: the ``function`` label of a bump of the probabilistic and adversary pages (one width)
EXTREMAL_FUNCTION = "bump (extremal)"

#: the ``function`` labels of the lower-bound family and of the decoder test
LOWER_BOUND_FUNCTION, DECODER_TEST_FUNCTION = "bump (lower bound)", "bump (decoder test)"
#: the two families, ``function`` label -> half-widths in units of the room the stragglers leave
#: (:func:`gap_room`): the lower bound's exactly the room, the decoder test's 2-4 times it
FAMILIES = {LOWER_BOUND_FUNCTION: (1.0,), DECODER_TEST_FUNCTION: (2.0, 2.5, 3.0, 3.5, 4.0)}


class Bump:
    """A compact ``C^3`` bump ``g(x) = height (1 - ((x - center) / half_width)^2)^4``, with exact norms.

    Parameters
    ----------
    center : float
    half_width : float > 0
    height : float

    Attributes
    ----------
    energy, sup_d1, sup_d2 : float
        ``int g''(x)^2 dx`` (the support inside the domain), ``sup |g'|`` and ``sup |g''|``.
    """

    def __init__(self, center: float, half_width: float, height: float = 1.0):
        self.center = check_real(center, "center", "Bump")
        self.half_width = check_real(half_width, "half_width", "Bump", minimum=0.0, include_min=False)
        self.height = check_real(height, "height", "Bump")
        self.energy = self.height ** 2 * PROFILE_ENERGY / self.half_width ** 3
        self.sup_d1 = abs(self.height) * _SUP_D1 / self.half_width
        self.sup_d2 = abs(self.height) * _SUP_D2 / self.half_width ** 2

    def __call__(self, x):
        s = (np.asarray(x, dtype=float) - self.center) / self.half_width
        return np.where(np.abs(s) < 1.0, self.height * (1.0 - s ** 2) ** 4, 0.0)

    def __repr__(self) -> str:
        return f"Bump(center={self.center:.6g}, half_width={self.half_width:.6g}, height={self.height:g})"


def line_inputs(code) -> np.ndarray:
    """Scalar data on the line ``X_k = alpha_k``, shape (K,) (GCC's and LCC's encoders reproduce it)."""
    return np.asarray(code.alphas, dtype=float)


def gap_room(code, k: int, n_stragglers: int) -> tuple[float, int]:
    """The widest clean neighbourhood of data point ``alpha_k`` that S contiguous stragglers can leave.

    The largest, over blocks of S stragglers around ``alpha_k``, distance to the nearest received
    worker (the ends of Omega count as workers); a bump within it is invisible to every received one.
    About ``(S + 1) / 2`` local worker spacings; `k` indexes ``code.alphas``.

    Returns ``(room, start)``: that distance and the first straggler of the block (-1: none).
    """
    betas = np.concatenate([[-1.0], np.asarray(code.betas, dtype=float), [1.0]])
    a = float(code.alphas[k])
    N, S = betas.size - 2, int(n_stragglers)
    j = int(np.searchsorted(betas, a))  # betas[j] is the first point >= a (index into the padded array)
    room, start = 0.0, -1
    for left in range(S + 1):
        lo, hi = j - 1 - left, j + S - left
        if lo < 0 or hi > N + 1:
            continue
        gap = min(a - betas[lo], betas[hi] - a)
        if gap > room:
            room, start = gap, lo  # stragglers: padded lo + 1 .. hi - 1, i.e. workers lo .. lo + S - 1
    return float(room), int(start)


def hiding_block(code, k: int, n_stragglers: int) -> np.ndarray:
    """The received workers (ascending) when S contiguous stragglers leave ``alpha_k`` its :func:`gap_room`."""
    N, S = int(code.n_workers), int(n_stragglers)
    start = gap_room(code, k, S)[1]
    if S == 0 or start < 0:
        return np.arange(N)
    return np.setdiff1d(np.arange(N), np.arange(start, start + S))


def hardest_data_point(code, n_stragglers: int) -> int:
    """The index of the data point around which S contiguous stragglers leave the most room (ties: near 0)."""
    alphas = np.asarray(code.alphas, dtype=float)
    room = np.array([gap_room(code, k, n_stragglers)[0] for k in range(alphas.size)])
    best = np.flatnonzero(room >= room.max() * (1 - 1e-9))
    return int(best[np.argmin(np.abs(alphas[best]))])


def bump_for(code, n_stragglers: int, width: float = 1.5, data_point: int | None = None) -> Bump:
    """The extremal bump of a cell: on data point ``alpha_k`` (the line data), half-width ``width`` times its room.

    `width` is in units of :func:`gap_room`; `data_point` k defaults to :func:`hardest_data_point`.
    """
    S = int(n_stragglers)
    k = hardest_data_point(code, S) if data_point is None else int(data_point)
    room = gap_room(code, k, S)[0]
    if room <= 0.0:  # the data point sits on a worker point: use half its spacing to the next
        betas = np.asarray(code.betas, dtype=float)
        room = 0.5 * float(np.min(np.abs(betas[betas != code.alphas[k]] - code.alphas[k])))
    return Bump(float(code.alphas[k]), float(width) * room)


def check_line(code) -> None:
    """Raise RuntimeError unless the encoder of `code` maps the line data (:func:`line_inputs`) to the line.

    Then ``f o u_enc = f`` on [-1, 1] and a :class:`Bump`'s exact norms are those of ``f o u_enc`` (every
    code of :mod:`gcc.codes` passes at ``lam_enc = 0``).
    """
    t = np.linspace(-1.0, 1.0, 2001)
    u = as_matrix(code.with_params(n_workers=t.size, betas=t).encode(line_inputs(code)))[:, 0]
    if not np.allclose(u, t, rtol=1e-10, atol=1e-10 * max(1.0, float(np.abs(u).max()))):
        raise RuntimeError(f"The encoder of {code!r} does not reproduce line data: the bumps' exact norms would "
                           "not be those of f o u_enc.")


def sweep_cells(n_grid: Sequence[int], s_values: Sequence[int], s_sweep_workers: int, s_grid: Sequence[int],
                gammas: Sequence[float] = (), joint_const: float = 1.0, n_inputs: int = 1):
    """The (N, S) cells of the three sweeps: N at fixed S, S at fixed N, and ``S = c N^gamma``.

    Parameters
    ----------
    n_grid, s_values : sequences of int
        The N sweep: every N with every S of `s_values`.
    s_sweep_workers : int
        The N of the S sweep over `s_grid`.
    s_grid : sequence of int
    gammas : sequence of float
        Joint sweeps: ``S = round(joint_const N^gamma)`` over `n_grid`.
    joint_const : float
    n_inputs : int
        K: cells with ``N - S < K`` are left out.

    Returns
    -------
    pandas.DataFrame
        ``sweep`` (``"N"``, ``"S"`` or ``"joint"``), ``gamma`` (NaN outside joint sweeps), ``N``, ``S``.
    """
    rows = [("N", np.nan, int(N), int(S)) for N in n_grid for S in s_values]
    rows += [("S", np.nan, int(s_sweep_workers), int(S)) for S in s_grid]
    rows += [("joint", float(g), int(N), int(round(joint_const * N ** g))) for g in gammas for N in n_grid]
    cells = pd.DataFrame(rows, columns=["sweep", "gamma", "N", "S"])
    return cells[cells["N"] - cells["S"] >= int(n_inputs)].reset_index(drop=True)


def extremal_sweep(cells, codes: Sequence[str] = ("gcc", "bacc"), *, n_inputs: int = 10,
                   families: Mapping[str, Sequence[float]] | None = None):
    """Worst-case loss of the extremal bumps, normalised by the norms of ``f o u_enc``.

    Per cell, code, family and width: :func:`bump_for` on :func:`line_inputs`, its loss on the
    worst received set (:func:`gcc.worst_case_stragglers`) or, for the lower-bound family, on the
    set that hides it (:func:`hiding_block`), and its exact norms (those of ``f o u_enc``: :func:`check_line`).

    Parameters
    ----------
    cells : pandas.DataFrame
        :func:`sweep_cells`.
    codes : sequence of str
        Scheme keys of :mod:`gcc.codes`.
    n_inputs : int
        K.
    families : mapping of str to sequence of float, optional
        ``function`` label -> half-widths in units of the room (default :data:`FAMILIES`).

    Returns
    -------
    pandas.DataFrame
        One row per (cell, scheme, family, width): ``sweep, gamma, function, scheme, straggler, N, S,
        K, width, center, half_width, loss, energy, sup_d1, sup_d2, seen`` (largest received value over
        the height), ``zero_ratio`` (R over the zero decoder's loss), ``normalised`` (``R / ||g''||^2``),
        ``normalised_sup`` (``R / (sup|g'| + sup|g''|)^2``, BACC's norm), ``norms`` (``"exact"``), ``block_start``.
    """
    codes = [canonical(c, "extremal_sweep") for c in codes]
    families = FAMILIES if families is None else families
    K = int(n_inputs)
    rows, checked = [], set()
    for cell in cells.itertuples(index=False):
        N, S = int(cell.N), int(cell.S)
        for name in codes:
            code = make(name, K, N)
            X = line_inputs(code)
            k = hardest_data_point(code, S)
            if name not in checked:
                check_line(code)
                checked.add(name)
            encoded = as_matrix(code.encode(X))[:, 0]
            for family, width in ((fam, w) for fam, ws in families.items() for w in ws):
                bump = bump_for(code, S, width, k)
                if family == LOWER_BOUND_FUNCTION:  # on the set that hides it: a lower bound for every decoder
                    received = hiding_block(code, k, S)
                    loss = gcc.evaluate(code, bump, X, received)["loss"]
                else:
                    received, loss = gcc.worst_case_stragglers(code, bump, X, S, return_loss=True)
                energy, d1, d2 = bump.energy, bump.sup_d1, bump.sup_d2
                missing = np.setdiff1d(np.arange(N), received)
                zero_loss = float(np.mean(bump(X) ** 2))
                rows.append({"sweep": cell.sweep, "gamma": cell.gamma, "function": family,
                             "scheme": name, "straggler": "worst", "N": N, "S": S, "K": K,
                             "width": float(width), "center": bump.center, "half_width": bump.half_width,
                             "loss": float(loss), "energy": energy, "sup_d1": d1, "sup_d2": d2,
                             "seen": float(np.max(np.abs(bump(encoded[received])))) / abs(bump.height),
                             "zero_ratio": float(loss) / zero_loss if zero_loss > 0 else np.nan,
                             "normalised": float(loss) / energy, "normalised_sup": float(loss) / (d1 + d2) ** 2,
                             "norms": "exact",
                             "block_start": int(missing[0]) if missing.size else -1})
    return pd.DataFrame(rows)


def extremal_summary(df):
    """The worst width of every (sweep, gamma, function, scheme, N, S) cell, for each normalisation.

    Returns a long table of :func:`extremal_sweep`: ``sweep, gamma, function, scheme, straggler, N, S,
    quantity`` (``"normalised"`` or ``"normalised_sup"``), ``mean`` (the worst value), ``width``, ``loss``.
    """
    keys = ["sweep", "gamma", "function", "scheme", "straggler", "N", "S"]
    frames = []
    for quantity in ("normalised", "normalised_sup"):
        idx = df.groupby(keys, dropna=False)[quantity].idxmax()
        best = df.loc[idx, keys + [quantity, "width", "loss"]].rename(columns={quantity: "mean"})
        frames.append(best.assign(quantity=quantity))
    out = pd.concat(frames, ignore_index=True)
    return out[keys + ["quantity", "mean", "width", "loss"]]


def extremal_slopes(summary, fit_min_ratio: float = 4.0, s_fit_min: float = 4.0):
    """Exponents of the extremal family: in N at fixed S, in S + 1 at fixed N, along joint paths, jointly.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`extremal_summary`.
    fit_min_ratio : float
        Cells with ``N >= fit_min_ratio (S + 1)`` only.
    s_fit_min : float
        S-slopes and the joint fit use ``S + 1 >= s_fit_min``; S-slopes also ``S + 1 <= N / 4``.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`gcc.experiments.slopes.RATE_SLOPE_COLUMNS` per ``quantity``; ``fixed`` is
        ``"S=<s>"``, ``"N=<n>"``, ``"gamma=<g>"`` or ``"joint fit"``.
    """
    keys = ["function", "scheme", "straggler", "quantity"]
    asymptotic = lambda d: d["N"] >= fit_min_ratio * (d["S"] + 1)  # noqa: E731
    ab = sweep_slopes(summary, keys, x_min=lambda g: fit_min_ratio * (g["S"] + 1),
                      s_window=lambda d: (d["S"] + 1 >= s_fit_min) & (d["S"] + 1 <= 0.25 * d["N"]))
    c = path_slopes(summary[summary["sweep"] == "joint"], keys, window=asymptotic)
    d = joint_fit(summary, keys, window=lambda g: asymptotic(g) & (g["S"] + 1 >= s_fit_min))
    return as_rate_slopes(pd.concat([ab, c, d], ignore_index=True))
