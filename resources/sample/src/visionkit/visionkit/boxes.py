"""Axis-aligned bounding boxes in ``(x1, y1, x2, y2)`` format."""
import numpy as np


def _as_boxes(boxes):
    arr = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    return arr


def box_area(boxes):
    """Compute the area of each box.

    Args:
        boxes: array of shape (N, 4) in xyxy format.

    Returns:
        np.ndarray: areas of shape (N,); degenerate boxes have area 0.
    """
    b = _as_boxes(boxes)
    return np.clip(b[:, 2] - b[:, 0], 0, None) * np.clip(b[:, 3] - b[:, 1], 0, None)


def iou(boxes_a, boxes_b):
    """Pairwise intersection-over-union between two sets of boxes.

    Args:
        boxes_a: array of shape (N, 4) in xyxy format.
        boxes_b: array of shape (M, 4) in xyxy format.

    Returns:
        np.ndarray: IoU matrix of shape (N, M) with values in [0, 1].
    """
    a = _as_boxes(boxes_a)
    b = _as_boxes(boxes_b)
    top_left = np.maximum(a[:, None, :2], b[None, :, :2])
    bottom_right = np.minimum(a[:, None, 2:], b[None, :, 2:])
    wh = np.clip(bottom_right - top_left, 0, None)
    inter = wh[..., 0] * wh[..., 1]
    union = box_area(a)[:, None] + box_area(b)[None, :] - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1.0), 0.0)


def nms(boxes, scores, iou_threshold=0.5):
    """Greedy non-maximum suppression.

    Args:
        boxes: array of shape (N, 4) in xyxy format.
        scores: array of shape (N,).
        iou_threshold: boxes overlapping a kept box by more than this are dropped.

    Returns:
        np.ndarray: indices of kept boxes, sorted by decreasing score.
    """
    b = _as_boxes(boxes)
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")
    keep = []
    while order.size > 0:
        best = order[0]
        keep.append(int(best))
        overlaps = iou(b[best], b[order[1:]])[0]
        order = order[1:][overlaps <= iou_threshold]
    return np.array(keep, dtype=np.int64)


def xyxy_to_xywh(boxes):
    """Convert boxes from corner format to ``(x, y, width, height)``.

    Args:
        boxes: array of shape (N, 4) in xyxy format.

    Returns:
        np.ndarray: array of shape (N, 4) in xywh format.
    """
    b = _as_boxes(boxes).copy()
    b[:, 2:] = b[:, 2:] - b[:, :2]
    return b


def xywh_to_xyxy(boxes):
    """Convert boxes from ``(x, y, width, height)`` to corner format.

    Args:
        boxes: array of shape (N, 4) in xywh format.

    Returns:
        np.ndarray: array of shape (N, 4) in xyxy format.
    """
    b = _as_boxes(boxes).copy()
    b[:, 2:] = b[:, :2] + b[:, 2:]
    return b


def clip_boxes(boxes, height, width):
    """Clip boxes to lie inside an image.

    Args:
        boxes: array of shape (N, 4) in xyxy format.
        height: image height.
        width: image width.

    Returns:
        np.ndarray: clipped boxes.
    """
    b = _as_boxes(boxes).copy()
    b[:, [0, 2]] = np.clip(b[:, [0, 2]], 0, width)
    b[:, [1, 3]] = np.clip(b[:, [1, 3]], 0, height)
    return b


class BoxList:
    """A set of boxes with optional confidence scores."""

    def __init__(self, boxes, scores=None):
        """Create a box list.

        Args:
            boxes: array of shape (N, 4) in xyxy format.
            scores: optional array of shape (N,).
        """
        self.boxes = _as_boxes(boxes)
        if scores is None:
            scores = np.ones(len(self.boxes))
        self.scores = np.asarray(scores, dtype=np.float64)
        if self.scores.shape != (len(self.boxes),):
            raise ValueError("scores must have one entry per box")

    def area(self):
        """Return the area of every box as an array of shape (N,)."""
        return box_area(self.boxes)

    def clip(self, height, width):
        """Return a new BoxList with boxes clipped to ``height`` x ``width``."""
        return BoxList(clip_boxes(self.boxes, height, width), self.scores.copy())

    def filter_by_score(self, threshold):
        """Return a new BoxList keeping boxes whose score is >= ``threshold``."""
        mask = self.scores >= threshold
        return BoxList(self.boxes[mask], self.scores[mask])

    def to_xywh(self):
        """Return the boxes in xywh format."""
        return xyxy_to_xywh(self.boxes)
