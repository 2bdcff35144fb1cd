"""Shelf layout: first fit by decreasing height (FFDH), the textbook shelf heuristic."""


def arrange(boxes: list[list[int]], width: int) -> list[list[float]]:
    order = sorted(range(len(boxes)), key=lambda i: -boxes[i][1])
    shelves: list[list[float]] = []  # [floor, height, used width]
    places = [[0.0, 0.0] for _ in boxes]
    for i in order:
        w, h = boxes[i]
        for shelf in shelves:
            if shelf[2] + w <= width:
                break
        else:
            floor = shelves[-1][0] + shelves[-1][1] if shelves else 0.0
            shelf = [floor, h, 0.0]
            shelves.append(shelf)
        places[i] = [shelf[2], shelf[0]]
        shelf[2] += w
    return places
