"""Models whose softmax output is the function f the workers compute.

Three families:

* :func:`vit_digits` -- a small Vision Transformer from timm (patch 4 on 16x16 digits, so 16
  tokens plus the class token), trained from scratch in seconds on a CPU. It stands in for the
  paper's ViT-Base/16 on ImageNet-1K.
* :class:`LeNet5` -- a LeNet-5-style CNN (two convolutions with max-pooling, three dense
  layers, ReLU), the paper's LeNet5, adapted to 16x16 inputs.
* :func:`timm_model` -- any timm architecture by name for the paper profile. Pretrained weights
  are read only from a local file (``checkpoint_path`` or timm's ``pretrained_cfg_overlay``
  ``file=``); with ``HF_HUB_OFFLINE=1`` nothing is downloaded.

:func:`build_model` maps a configuration dictionary (the cache key of
:mod:`gcc.dnn.training`) to a model.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402
from torch import nn  # noqa: E402

from ..validation import check_int, invalid  # noqa: E402

__all__ = ["LeNet5", "vit_digits", "timm_model", "build_model", "n_parameters",
           "VIT_DIGITS_CONFIG", "LENET_DIGITS_CONFIG"]

#: Configuration of the embedded ViT (timm VisionTransformer); see :func:`vit_digits`.
VIT_DIGITS_CONFIG: dict[str, Any] = {
    "arch": "vit", "img_size": 16, "patch_size": 4, "in_chans": 1, "num_classes": 10,
    "embed_dim": 64, "depth": 3, "num_heads": 4, "mlp_ratio": 2.0,
}
#: Configuration of the embedded LeNet-5-style CNN; see :class:`LeNet5`.
LENET_DIGITS_CONFIG: dict[str, Any] = {"arch": "lenet5", "img_size": 16, "in_chans": 1, "num_classes": 10}


class LeNet5(nn.Module):
    """LeNet-5-style CNN: conv(6, 5x5) - pool - conv(16, 5x5) - pool - 120 - 84 - classes.

    Parameters
    ----------
    in_chans : int
        Input channels.
    num_classes : int
        Output classes.
    img_size : int
        Side of the square input (16 for the upscaled digits, 28 for MNIST, 32 for LeCun's).

    Notes
    -----
    The first convolution is padded ("same") as in the common MNIST variant, so a 16x16 input
    gives 16 -> pool 8 -> conv 4 -> pool 2 and a 16*2*2 = 64-feature flatten. ReLU and max-pooling
    replace LeCun's scaled tanh and subsampling, as in most modern re-implementations.

    References
    ----------
    .. [1] Y. LeCun, L. Bottou, Y. Bengio and P. Haffner, "Gradient-based learning applied to
       document recognition", Proc. IEEE 86(11), 1998.
    """

    def __init__(self, in_chans: int = 1, num_classes: int = 10, img_size: int = 16):
        super().__init__()
        check_int(img_size, "img_size", "LeNet5", minimum=12)
        self.features = nn.Sequential(
            nn.Conv2d(in_chans, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2),
        )
        side = ((img_size // 2) - 4) // 2
        self.classifier = nn.Sequential(
            nn.Flatten(), nn.Linear(16 * side * side, 120), nn.ReLU(),
            nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, num_classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits, shape (B, num_classes), of images of shape (B, in_chans, img_size, img_size)."""
        return self.classifier(self.features(x))


def vit_digits(img_size: int = 16, patch_size: int = 4, in_chans: int = 1, num_classes: int = 10,
               embed_dim: int = 64, depth: int = 3, num_heads: int = 4, mlp_ratio: float = 2.0) -> nn.Module:
    """A small timm Vision Transformer for the embedded digits experiment.

    Parameters
    ----------
    img_size, patch_size, in_chans, num_classes : int
        Input geometry and classes; 16/4 gives (16/4)^2 = 16 patch tokens plus the class token.
    embed_dim, depth, num_heads : int
        Width, number of blocks and attention heads.
    mlp_ratio : float
        Hidden width of each block's MLP relative to ``embed_dim``.

    Returns
    -------
    timm.models.vision_transformer.VisionTransformer
        Randomly initialised (``pretrained=False``); about 0.1M parameters at the defaults.

    References
    ----------
    .. [1] A. Dosovitskiy et al., "An image is worth 16x16 words: Transformers for image
       recognition at scale", ICLR 2021.
    """
    from timm.models.vision_transformer import VisionTransformer

    return VisionTransformer(
        img_size=img_size, patch_size=patch_size, in_chans=in_chans, num_classes=num_classes,
        embed_dim=embed_dim, depth=depth, num_heads=num_heads, mlp_ratio=mlp_ratio,
        drop_rate=0.0, drop_path_rate=0.0,
    )


def timm_model(name: str, pretrained: bool = False, checkpoint_path: str | os.PathLike | None = None,
               weights_file: str | os.PathLike | None = None, **kwargs: Any) -> nn.Module:
    """Any timm architecture by name, with weights only from local files.

    Parameters
    ----------
    name : str
        timm model name, e.g. ``"vit_base_patch16_224.augreg2_in21k_ft_in1k"``.
    pretrained : bool
        Load timm's pretrained weights. Together with ``weights_file`` they are read from that
        file (timm's ``pretrained_cfg_overlay=dict(file=...)``); without it timm looks in the
        local Hugging Face cache (``HF_HUB_OFFLINE=1`` forbids any download, so a missing file
        raises instead of downloading).
    checkpoint_path : path, optional
        A state-dict checkpoint (``.pth``/``.safetensors``) loaded after construction; an
        alternative to ``pretrained`` for weights fine-tuned elsewhere.
    weights_file : path, optional
        Local file of the pretrained weights (used with ``pretrained=True``).
    **kwargs
        Passed to ``timm.create_model`` (``num_classes``, ``img_size``, ``in_chans`` ...).

    Returns
    -------
    torch.nn.Module
    """
    import timm

    if not isinstance(name, str) or not name:
        raise invalid("name", "timm_model", "a non-empty timm model name", name)
    for arg, value in (("checkpoint_path", checkpoint_path), ("weights_file", weights_file)):
        if value is not None and not Path(value).is_file():
            raise invalid(arg, "timm_model", "an existing file", str(value))
    if weights_file is not None:
        kwargs["pretrained_cfg_overlay"] = dict(file=str(weights_file))
    model = timm.create_model(
        name, pretrained=pretrained, checkpoint_path=str(checkpoint_path) if checkpoint_path else "", **kwargs
    )
    if "img_size" in kwargs or "in_chans" in kwargs:
        # timm keeps the pretrained input size in pretrained_cfg even when the model was built
        # for another one; the evaluation transform is resolved from it, so correct it here.
        cfg = dict(getattr(model, "pretrained_cfg", {}) or {})
        chans, height, width = cfg.get("input_size", (3, 224, 224))
        side = kwargs.get("img_size", (height, width))
        side = (side, side) if isinstance(side, int) else tuple(side)
        cfg["input_size"] = (int(kwargs.get("in_chans", chans)), *side)
        model.pretrained_cfg = cfg
    return model


def build_model(config: Mapping[str, Any]) -> nn.Module:
    """Build a model from a configuration dictionary.

    Parameters
    ----------
    config : mapping
        ``{"arch": "vit", ...}`` (keyword arguments of :func:`vit_digits`),
        ``{"arch": "lenet5", ...}`` (of :class:`LeNet5`) or
        ``{"arch": "timm", "name": ..., ...}`` (of :func:`timm_model`).
        Keys used only by training (``epochs``, ``lr`` ...) are ignored here.

    Returns
    -------
    torch.nn.Module
    """
    config = dict(config)
    arch = config.pop("arch", None)
    if arch == "vit":
        keys = ("img_size", "patch_size", "in_chans", "num_classes", "embed_dim", "depth", "num_heads", "mlp_ratio")
        return vit_digits(**{k: config[k] for k in keys if k in config})
    if arch == "lenet5":
        return LeNet5(**{k: config[k] for k in ("in_chans", "num_classes", "img_size") if k in config})
    if arch == "timm":
        name = config.pop("name", None)
        allowed = {"pretrained", "checkpoint_path", "weights_file", "num_classes", "img_size", "in_chans",
                   "patch_size", "embed_dim", "depth", "num_heads", "mlp_ratio"}
        # timm's own constructor arguments pass through under "kwargs".
        config.update(config.pop("kwargs", {}) or {})
        return timm_model(name, **{k: v for k, v in config.items() if k in allowed})
    raise invalid("config", "build_model", "a configuration whose 'arch' key is one of 'vit', 'lenet5', 'timm'",
                  arch)


def n_parameters(model: nn.Module) -> int:
    """Number of trainable parameters."""
    return int(sum(p.numel() for p in model.parameters() if p.requires_grad))
