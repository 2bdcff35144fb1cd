from assay.loop.layers import LayerTracker


def test_three_discards_promote_and_keeps_reset():
    tracker = LayerTracker()
    assert tracker.current == 1
    assert tracker.record(False) is False
    assert tracker.record(True) is False  # a keep resets the count
    assert [tracker.record(False) for _ in range(3)] == [False, False, True]
    assert tracker.current == 2 and not tracker.exhausted


def test_all_layers_exhausted():
    tracker = LayerTracker(layers=[1, 2], discards_per_layer=1)
    assert tracker.promotion_due()
    tracker.record(False)
    tracker.record(False)
    assert tracker.exhausted
    assert tracker.current == 2
