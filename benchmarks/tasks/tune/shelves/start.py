"""Shelf layout: where each box goes in a cabinet of a given width (boxes stand on shelves, left to right)."""

MARGIN = 1.0  # room left beside each box and above each shelf
SORT_BY_HEIGHT = 0.0  # how much a box's height moves it forward in the order (0: the order given)
SORT_BY_WIDTH = 0.0  # how much its width does
FILL = 1.0  # a shelf takes boxes until this share of the width is used


def arrange(boxes: list[list[int]], width: int) -> list[list[float]]:
    order = sorted(
        range(len(boxes)), key=lambda i: -(SORT_BY_HEIGHT * boxes[i][1] + SORT_BY_WIDTH * boxes[i][0])
    )
    places = [[0.0, 0.0] for _ in boxes]
    x, y, tallest = 0.0, 0.0, 0.0
    for i in order:
        w, h = boxes[i]
        if x > 0 and (x + w > width or x > FILL * width):
            x, y, tallest = 0.0, y + tallest + MARGIN, 0.0
        places[i] = [x, y]
        x += w + MARGIN
        tallest = max(tallest, h)
    return places
