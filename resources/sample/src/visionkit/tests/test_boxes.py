import numpy as np
import pytest

from visionkit import BoxList, box_area, clip_boxes, iou, nms, xywh_to_xyxy, xyxy_to_xywh

UNIT = np.array([[0.0, 0.0, 1.0, 1.0]])


def shifted_iou(dx):
    """Helper: IoU of the unit box with a copy shifted right by ``dx``."""
    return iou(UNIT, UNIT + np.array([dx, 0.0, dx, 0.0]))[0, 0]


def test_box_area():
    assert np.allclose(box_area([[0, 0, 2, 3], [1, 1, 2, 2]]), [6.0, 1.0])


def test_box_area_degenerate():
    assert np.allclose(box_area([[2, 2, 1, 1]]), [0.0])


def test_box_area_single_box_shape():
    assert box_area([0, 0, 4, 4]).shape == (1,)


def test_iou_identical():
    assert np.allclose(iou(UNIT, UNIT), [[1.0]])


def test_iou_disjoint():
    assert np.allclose(iou(UNIT, UNIT + 5), [[0.0]])


@pytest.mark.parametrize("dx, expected", [(0.5, 1 / 3), (0.0, 1.0), (1.0, 0.0)])
def test_iou_shift(dx, expected):
    assert np.isclose(shifted_iou(dx), expected)


def test_iou_matrix_shape():
    a = np.array([[0, 0, 1, 1], [0, 0, 2, 2]], dtype=float)
    b = np.array([[0, 0, 1, 1], [1, 1, 2, 2], [5, 5, 6, 6]], dtype=float)
    out = iou(a, b)
    assert out.shape == (2, 3)
    assert np.isclose(out[1, 0], 0.25)


def test_nms_suppresses_overlap():
    boxes = np.array([[0, 0, 10, 10], [1, 1, 10, 10], [20, 20, 30, 30]], dtype=float)
    keep = nms(boxes, np.array([0.9, 0.8, 0.7]), iou_threshold=0.5)
    assert keep.tolist() == [0, 2]


def test_nms_keeps_all_disjoint():
    boxes = np.array([[0, 0, 1, 1], [2, 2, 3, 3], [4, 4, 5, 5]], dtype=float)
    keep = nms(boxes, np.array([0.1, 0.3, 0.2]))
    assert keep.tolist() == [1, 2, 0]


def test_nms_empty():
    assert nms(np.zeros((0, 4)), np.zeros(0)).size == 0


def test_xyxy_to_xywh():
    assert np.allclose(xyxy_to_xywh([[1, 2, 4, 6]]), [[1, 2, 3, 4]])


def test_xywh_to_xyxy():
    assert np.allclose(xywh_to_xyxy([[1, 2, 3, 4]]), [[1, 2, 4, 6]])


def test_format_roundtrip():
    rng = np.random.default_rng(1)
    boxes = np.sort(rng.random((5, 4)), axis=1)[:, [0, 1, 2, 3]]
    assert np.allclose(xywh_to_xyxy(xyxy_to_xywh(boxes)), boxes)


def test_xywh_does_not_modify_input():
    boxes = np.array([[1.0, 2.0, 3.0, 4.0]])
    xywh_to_xyxy(boxes)
    xyxy_to_xywh(boxes)
    assert np.array_equal(boxes, [[1.0, 2.0, 3.0, 4.0]])


def test_clip_boxes():
    out = clip_boxes([[-5, -5, 50, 50]], height=20, width=30)
    assert np.allclose(out, [[0, 0, 30, 20]])


def test_clip_boxes_inside_unchanged():
    boxes = np.array([[1.0, 1.0, 2.0, 2.0]])
    assert np.allclose(clip_boxes(boxes, 10, 10), boxes)


def test_clip_boxes_fully_outside_has_zero_area():
    out = clip_boxes([[40, 40, 50, 50]], height=20, width=30)
    assert np.allclose(out, [[30, 20, 30, 20]])


class TestBoxList:
    def test_init_default_scores(self):
        bl = BoxList([[0, 0, 1, 1], [0, 0, 2, 2]])
        assert np.allclose(bl.scores, [1.0, 1.0])

    def test_init_rejects_bad_scores(self):
        with pytest.raises(ValueError):
            BoxList([[0, 0, 1, 1]], scores=[0.1, 0.2])

    def test_area(self, box_list: BoxList):
        assert np.allclose(box_list.area(), [100.0, 100.0, 200.0])

    def test_area_of_new_list(self):
        bl = BoxList([[0, 0, 3, 3]])
        assert np.allclose(bl.area(), [9.0])

    def test_clip(self, box_list: BoxList):
        clipped = box_list.clip(12, 12)
        assert np.allclose(clipped.boxes[2], [12, 12, 12, 12])
        assert np.allclose(clipped.scores, box_list.scores)

    def test_clip_keeps_original(self, box_list: BoxList):
        box_list.clip(1, 1)
        assert box_list.boxes[2, 3] == 40

    def test_clip_area_shrinks(self, box_list: BoxList):
        before = box_list.area()
        box_list_clipped = box_list.clip(8, 8)
        assert np.all(box_list_clipped.boxes[:, 2:] <= 8)
        assert np.all(box_area(box_list_clipped.boxes) <= before)

    def test_filter_by_score(self, box_list: BoxList):
        kept = box_list.filter_by_score(0.5)
        assert np.allclose(kept.scores, [0.9, 0.7])

    def test_filter_by_score_none_left(self, box_list: BoxList):
        assert box_list.filter_by_score(0.95).boxes.shape == (0, 4)

    def test_filter_by_score_all_kept(self):
        bl = BoxList([[0, 0, 1, 1]], scores=[0.2])
        assert bl.filter_by_score(0.0).boxes.shape == (1, 4)

    def test_to_xywh(self, box_list: BoxList):
        assert np.allclose(box_list.to_xywh()[2], [20, 20, 10, 20])
