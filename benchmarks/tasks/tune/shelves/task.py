"""Shelf layout: 40 boxes, integer widths 5-40 and heights 4-30, go into a cabinet 100 wide, unrotated.
``arrange(boxes, width)`` returns each box's lower-left corner ``[x, y]``; a layout with a box outside the
width, below the floor or overlapping another is refused (ValueError). The gap is the height used over the area
bound ``max(ceil(total area / width), tallest box)``, in percent."""

import math
import random

FILE = "layout.py"
SHAPE = "constructor"
FUNCTION = "arrange"
TARGET = 12.0
WIDTH = 100
PARAMETERS = {
    "MARGIN": (0.0, 4.0),
    "SORT_BY_HEIGHT": (0.0, 1.0),
    "SORT_BY_WIDTH": (-1.0, 1.0),
    "FILL": (0.5, 1.0),
}


def instance(seed):
    rng = random.Random(seed)
    return {"width": WIDTH, "boxes": [[rng.randint(5, 40), rng.randint(4, 30)] for _ in range(40)]}


def height(places, boxes, width):
    if len(places) != len(boxes):
        raise ValueError(f"{len(places)} places for {len(boxes)} boxes")
    rects = []
    for (x, y), (w, h) in zip(places, boxes, strict=True):
        if x < 0 or y < 0 or x + w > width + 1e-9:
            raise ValueError(f"a box at {x}, {y} is outside the cabinet")
        rects.append((x, y, x + w, y + h))
    rects.sort()
    for i, (x0, y0, x1, y1) in enumerate(rects):
        for a0, b0, _, b1 in rects[i + 1 :]:
            if a0 >= x1 - 1e-9:
                break
            if b0 < y1 - 1e-9 and y0 < b1 - 1e-9:
                raise ValueError(f"boxes at {x0}, {y0} and {a0}, {b0} overlap")
    return max(y1 for _, _, _, y1 in rects)


def gap(arrange, instance):
    boxes, width = instance["boxes"], instance["width"]
    bound = max(math.ceil(sum(w * h for w, h in boxes) / width), max(h for _, h in boxes))
    places = arrange([list(b) for b in boxes], width)
    return 100 * (height(places, boxes, width) - bound) / bound
