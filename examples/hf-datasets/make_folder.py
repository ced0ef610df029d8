"""Writes the example's `datasets` folder (``save_to_disk``): a few made-up sentences, each labelled literal
or metaphorical, with a class-label column as datasets on the Hub usually have.

    python make_folder.py            # writes ./data/metaphor_sentences beside this file

Your own data would come from ``load_dataset(...)`` or a conversion script; nothing here is from a corpus.
"""

from __future__ import annotations

import sys
from pathlib import Path

LABELS = ["literal", "metaphorical"]
SENTENCES = {
    "train": [
        ("She drank a glass of cold water.", 0), ("His words cut deeper than a knife.", 1),
        ("The train left the station at noon.", 0), ("Time is a thief that steals our youth.", 1),
        ("He planted tomatoes in the garden.", 0), ("Her ideas planted a seed in my mind.", 1),
        ("The river flows past the old mill.", 0), ("Money flows through the city's veins.", 1),
        ("They built a wall around the yard.", 0), ("He built a wall around his feelings.", 1),
        ("The lamp lit up the small room.", 0), ("Her smile lit up the small room.", 1),
        ("The storm broke the branches.", 0), ("The news broke her heart.", 1),
        ("We climbed the hill before dawn.", 0), ("Prices climbed all through the year.", 1),
        ("The baker sold fresh bread.", 0),
    ],
    "test": [
        ("The cat slept on the warm stone.", 0), ("The city never sleeps.", 1),
        ("He cut the bread into slices.", 0), ("The company cut a thousand jobs.", 1),
        ("The water in the pool was cold.", 0), ("She gave him a cold stare.", 1),
        ("They walked along the beach.", 0), ("Ideas walked out of the meeting with her.", 1),
    ],
}


def write(target: Path) -> Path:
    """Save the two splits under ``target`` (a DatasetDict folder) and return it."""
    import datasets

    features = datasets.Features({"sentence": datasets.Value("string"), "label": datasets.ClassLabel(names=LABELS)})
    splits = {
        split: datasets.Dataset.from_dict(
            {"sentence": [s for s, _ in rows], "label": [label for _, label in rows]}, features=features)
        for split, rows in SENTENCES.items()
    }
    datasets.DatasetDict(splits).save_to_disk(str(target))
    return target


if __name__ == "__main__":
    folder = write(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "data" / "metaphor_sentences")
    print(f"wrote {folder}")
