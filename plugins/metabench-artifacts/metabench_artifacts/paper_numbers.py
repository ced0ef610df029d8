"""Boisson et al. (EMNLP 2023)'s BERT-base numbers, as printed (Tables 2-5), for the datasets metabench has.

Copied from shared/papers/construction_artifacts.md §3. Percentages; Tables 2-3 macro-F1 (one HPO-selected
run per cell, 5-fold means in Table 3 except MAGPIE and VUAC_*, single split), Tables 4-5 Maj, accuracy and
metaphor-class P/R/F1. Keys: the paper's dataset label.
"""

from __future__ import annotations

MODEL = "BERT-base (paper)"

# Table 2: original splits, macro-F1: Def, PME, Masked.
TABLE_2 = {
    "TroFi": (75.78, 56.67, 74.42),
    "TSV_AN": (87.36, 52.49, 80.88),
    "TSV_SVO": (92.33, 50.27, 90.98),
    "VUAC_ST1": (82.52, 69.82, 70.64),
}

# Table 3: macro-F1, random Def, PME, Masked | lexical Def, PME, Masked.
TABLE_3 = {
    "CARD_N": (87.38, 41.21, 85.81, 89.64, 49.12, 86.72),
    "JANK": (82.66, 38.61, 81.23, 82.02, 45.17, 80.67),
    "TroFi": (88.26, 70.23, 84.33, 81.24, 55.75, 77.28),
    "TSV_AN": (89.19, 59.02, 79.03, 86.92, 62.22, 77.72),
    "TSV_AN_L2": (89.19, 59.02, 79.03, 87.53, 59.3, 78.13),
    "MOH": (63.71, 54.31, 53.97, 63.86, 54.43, 54.54),
    "MAGPIE": (94.83, 91.07, 81.17, 87.66, 79.85, 78.38),
    "VUAC_ST1": (82.81, 70.19, 70.93, 73.81, 62.28, 67.88),
    "VUAC_ST2": (85.13, 75.27, 68.22, 78.53, 66.70, 69.26),
    "VUAC_BO": (85.42, 63.26, 75.94, 82.0, 64.50, 72.42),
}

# Tables 4 (random) and 5 (lexical): Maj | Acc Def, PME, Mask | P Def, PME, Mask | R ... | F1 ... (metaphor class).
TABLE_4 = {
    "CARD_N": (50.0, 87.5, 44.5, 85.9, 90.5, 42.8, 86.7, 83.9, 33.9, 85.1, 87.0, 35.4, 85.6),
    "JANK": (66.7, 85.3, 51.1, 84.2, 81.2, 45.1, 82.2, 75.0, 28.4, 68.5, 76.5, 45.1, 74.2),
    "TroFi": (57.6, 88.5, 71.3, 84.6, 91.2, 73.7, 88.1, 88.7, 78.2, 84.8, 89.9, 75.8, 86.4),
    "TSV_AN": (50.3, 89.3, 59.4, 79.2, 91.3, 62.2, 80.2, 86.9, 52.0, 78.0, 89.1, 55.8, 78.9),
    "MOH": (78.8, 78.3, 73.2, 73.8, 48.8, 32.7, 33.2, 35.8, 22.1, 20.0, 40.7, 45.1, 23.9),
    "MAGPIE": (74.7, 96.1, 93.3, 86.7, 97.4, 95.4, 88.6, 97.3, 95.5, 94.3, 97.4, 95.5, 91.4),
    "VUAC_ST1": (71.6, 86.2, 75.8, 77.2, 77.3, 57.5, 61.4, 73.1, 56.9, 53.9, 75.1, 57.2, 57.4),
    "VUAC_ST2": (84.3, 92.3, 86.5, 84.7, 76.7, 56.4, 51.4, 73.0, 61.1, 39.9, 74.8, 58.6, 45.0),
    "VUAC_BO": (50.5, 85.4, 63.3, 76.0, 84.6, 63.4, 75.4, 86.9, 64.6, 77.8, 85.8, 64.0, 76.6),
}
TABLE_5 = {
    "CARD_N": (50.0, 89.7, 50.0, 86.7, 90.1, 50.0, 88.6, 89.5, 59.4, 84.4, 89.7, 54.0, 86.4),
    "JANK": (66.7, 84.2, 51.4, 83.3, 78.6, 26.7, 78.8, 74.2, 45.8, 70.0, 75.9, 33.3, 73.6),
    "TroFi": (57.6, 82.3, 62.9, 78.5, 85.1, 63.4, 81.2, 85.0, 84.1, 82.9, 84.7, 72.2, 81.6),
    "TSV_AN": (50.3, 87.0, 63.5, 77.8, 88.0, 64.6, 76.9, 85.2, 59.9, 79.2, 86.5, 61.2, 77.9),
    "TSV_AN_L2": (50.3, 87.6, 59.5, 78.2, 91.7, 61.5, 79.6, 83.0, 53.4, 77.0, 87.1, 56.8, 78.0),
    "MOH": (78.8, 79.0, 74.4, 74.2, 56.9, 34.9, 34.4, 34.4, 22.2, 45.1, 40.7, 24.5, 45.1),
    "MAGPIE": (73.7, 90.2, 84.9, 83.4, 94.4, 88.4, 88.4, 92.2, 91.5, 89.2, 93.3, 89.9, 88.8),
    "VUAC_ST1": (68.5, 77.0, 67.0, 73.2, 62.7, 47.8, 58.5, 66.8, 49.9, 51.6, 64.7, 48.8, 54.8),
    "VUAC_ST2": (82.6, 88.3, 83.3, 84.2, 68.8, 53.2, 56.1, 60.0, 36.3, 41.7, 64.1, 43.2, 47.9),
    "VUAC_BO": (53.4, 82.2, 65.5, 73.0, 80.7, 64.9, 71.5, 87.7, 77.0, 82.1, 84.1, 77.0, 76.5),
}


#: Printed values are rounded to 0.1, which moves the harmonic mean of P and R by about 0.1 at most: an F1 more
#: than this above it cannot be a rounding of a consistent cell.
F1_TOLERANCE = 0.5
F1_MARK = "†"
F1_NOTE = (f"{F1_MARK}: the paper's metaphor-class F1 exceeds the harmonic mean of its own P and R (by more than "
           f"rounding allows, {F1_TOLERANCE} points), which no F1 can (for a fold mean, the mean F1 is at most the "
           "harmonic mean of the mean P and R); the cell contradicts itself and is not a reproduction target "
           "(construction_artifacts.md §7)")


def inconsistent_f1(row: tuple) -> list[int]:
    """Positions, in a Table 4/5 row (Maj | Acc ×3 | P ×3 | R ×3 | F1 ×3), of the F1 cells that cannot follow
    from the same view's P and R: F1 ≤ 2PR / (P + R) holds for every test set, and for fold means by the
    concavity of the harmonic mean."""
    out = []
    for view in range(3):
        p, r, f1 = row[4 + view], row[7 + view], row[10 + view]
        if f1 > (2 * p * r / (p + r) if p + r else 0.0) + F1_TOLERANCE:
            out.append(10 + view)
    return out
