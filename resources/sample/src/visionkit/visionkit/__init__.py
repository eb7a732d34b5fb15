"""visionkit: small numpy image and bounding-box utilities."""
from .image import (
    center_crop,
    hflip,
    normalize,
    pad,
    resize_nearest,
    rotate90,
    to_grayscale,
    vflip,
)
from .boxes import (
    BoxList,
    box_area,
    clip_boxes,
    iou,
    nms,
    xywh_to_xyxy,
    xyxy_to_xywh,
)

__all__ = [
    "BoxList",
    "box_area",
    "center_crop",
    "clip_boxes",
    "hflip",
    "iou",
    "nms",
    "normalize",
    "pad",
    "resize_nearest",
    "rotate90",
    "to_grayscale",
    "vflip",
    "xywh_to_xyxy",
    "xyxy_to_xywh",
]
__version__ = "0.3.0"
