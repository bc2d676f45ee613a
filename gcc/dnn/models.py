"""The paper's three networks, whose softmax output is the function f the workers compute.

:class:`LeNet5`, :func:`repvgg` (with :func:`deploy`, its single-branch inference form),
:func:`small_vit` (built from a configuration by :func:`build_model`) and :func:`timm_model`
(weights from local files only).
"""
from __future__ import annotations

import os
from numbers import Integral, Real
from pathlib import Path
from typing import Any, Mapping, Sequence

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402
from torch import nn  # noqa: E402

from ..validation import BOOL, Interval, NoneOr, invalid, validate_params  # noqa: E402
from ._checks import INT_TUPLE, MAPPING, MODULE, NAME, PATH, check_keys  # noqa: E402

__all__ = ["LeNet5", "small_vit", "repvgg", "deploy", "timm_model", "build_model", "load_checkpoint",
           "n_parameters", "ARCHS", "CONFIG_KEYS"]

#: The ``arch`` values of :func:`build_model`.
ARCHS = ("lenet5", "repvgg", "vit")

_POSITIVE = Interval(Integral, 1, None)


class LeNet5(nn.Module):
    """LeNet-5: conv(6, 5x5) - pool - conv(16, 5x5) - pool - 120 - 84 - classes.

    The first convolution is padded ("same"), with ReLU and max-pooling: 61,706 parameters on
    28x28 inputs, the paper's "about 6e4".

    Parameters
    ----------
    in_chans : int
        Input channels.
    num_classes : int
        Output classes.
    img_size : int
        Side of the square input, 12 to 1024 (28 for Fashion-MNIST).

    References
    ----------
    .. [1] Y. LeCun et al., "Gradient-based learning applied to document recognition", Proc. IEEE, 1998.

    Examples
    --------
    >>> from gcc.dnn.models import LeNet5, n_parameters
    >>> n_parameters(LeNet5(img_size=28))
    61706
    """

    @validate_params({"in_chans": _POSITIVE, "num_classes": _POSITIVE, "img_size": Interval(Integral, 12, 1024)})
    def __init__(self, in_chans: int = 1, num_classes: int = 10, img_size: int = 28):
        super().__init__()
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


@validate_params({"img_size": _POSITIVE, "patch_size": _POSITIVE, "in_chans": _POSITIVE, "num_classes": _POSITIVE,
                  "embed_dim": _POSITIVE, "depth": _POSITIVE, "num_heads": _POSITIVE,
                  "mlp_ratio": Interval(Real, 0, None, closed="neither")})
def small_vit(img_size: int = 28, patch_size: int = 7, in_chans: int = 1, num_classes: int = 10,
              embed_dim: int = 64, depth: int = 4, num_heads: int = 4, mlp_ratio: float = 2.0) -> nn.Module:
    """A timm Vision Transformer sized for CPU training.

    Parameters
    ----------
    img_size, patch_size, in_chans, num_classes : int
        Input geometry and classes; ``patch_size`` divides ``img_size``.
    embed_dim, depth, num_heads : int
        Width, number of blocks and attention heads; ``num_heads`` divides ``embed_dim``.
    mlp_ratio : float
        Hidden width of each block's MLP relative to ``embed_dim``.

    Returns
    -------
    timm.models.vision_transformer.VisionTransformer
        Randomly initialised; 139,018 parameters at the defaults.

    References
    ----------
    .. [1] A. Dosovitskiy et al., "An image is worth 16x16 words", ICLR 2021.

    Examples
    --------
    >>> from gcc.dnn.models import n_parameters, small_vit
    >>> n_parameters(small_vit())
    139018
    >>> small_vit(patch_size=5)
    Traceback (most recent call last):
    ...
    gcc.validation.InvalidParameterError: The 'patch_size' parameter of small_vit must be a divisor of img_size = 28 (the patches tile the image). Got 5 instead.
    """
    from timm.models.vision_transformer import VisionTransformer

    if img_size % patch_size:      # timm would drop the pixels beyond the last whole patch
        raise invalid("patch_size", "small_vit", f"a divisor of img_size = {img_size} (the patches tile the image)",
                      patch_size)
    if embed_dim % num_heads:
        raise invalid("num_heads", "small_vit", f"a divisor of embed_dim = {embed_dim}", num_heads)
    if int(embed_dim * mlp_ratio) < 1:
        raise invalid("mlp_ratio", "small_vit", f"a float with embed_dim * mlp_ratio >= 1 (embed_dim = {embed_dim})",
                      mlp_ratio)

    return VisionTransformer(
        img_size=img_size, patch_size=patch_size, in_chans=in_chans, num_classes=num_classes,
        embed_dim=embed_dim, depth=depth, num_heads=num_heads, mlp_ratio=mlp_ratio,
        drop_rate=0.0, drop_path_rate=0.0,
    )


@validate_params({"in_chans": _POSITIVE, "num_classes": _POSITIVE, "stem_chs": _POSITIVE, "widths": INT_TUPLE,
                  "depths": INT_TUPLE, "strides": INT_TUPLE})
def repvgg(in_chans: int = 1, num_classes: int = 10, stem_chs: int = 16, widths: Sequence[int] = (16, 32, 64, 256),
           depths: Sequence[int] = (1, 2, 2, 1), strides: Sequence[int] = (1, 2, 2, 2)) -> nn.Module:
    """A RepVGG of timm's RepVGG family (``ByobNet`` with "rep" blocks), in its multi-branch training form.

    The defaults keep RepVGG-A's shape at a width a CPU trains in about a minute; :func:`deploy`
    fuses each block's branches into one 3x3 convolution.

    Parameters
    ----------
    in_chans, num_classes : int
        Input channels and classes.
    stem_chs : int
        Channels of the stride-2 stem block.
    widths, depths, strides : sequence of int
        Per stage: output channels, number of blocks and the first block's stride (equal lengths).

    Returns
    -------
    timm.models.byobnet.ByobNet

    References
    ----------
    .. [1] X. Ding et al., "RepVGG: making VGG-style ConvNets great again", CVPR 2021.

    Examples
    --------
    >>> import torch
    >>> from gcc.dnn.models import deploy, n_parameters, repvgg
    >>> net = repvgg().eval()
    >>> fused = deploy(net)
    >>> n_parameters(net), n_parameters(fused)
    (248074, 222074)
    >>> x = torch.randn(2, 1, 28, 28)
    >>> bool(torch.allclose(net(x), fused(x), atol=1e-4))
    True
    """
    from timm.models.byobnet import ByobNet, ByoBlockCfg, ByoModelCfg

    if not (len(widths) == len(depths) == len(strides)):
        raise invalid("widths", "repvgg", "a sequence as long as 'depths' and 'strides'", list(widths),
                      f"{len(widths)} widths, {len(depths)} depths, {len(strides)} strides")
    blocks = tuple(ByoBlockCfg(type="rep", d=int(d), c=int(c), s=int(s)) for c, d, s in zip(widths, depths, strides))
    return ByobNet(ByoModelCfg(blocks=blocks, stem_type="rep", stem_chs=int(stem_chs)), num_classes=num_classes,
                   in_chans=in_chans)


@validate_params({"model": MODULE})
def deploy(model: nn.Module) -> nn.Module:
    """The inference form of a model (timm's ``reparameterize_model`` on a copy, in eval mode).

    Parameters
    ----------
    model : torch.nn.Module
        Keeps its weights and its training mode.

    Returns
    -------
    torch.nn.Module
    """
    from timm.utils import reparameterize_model

    was_training = model.training
    model.eval()
    fused = reparameterize_model(model, inplace=False).eval()
    model.train(was_training)
    return fused


@validate_params({"name": NAME, "pretrained": BOOL, "checkpoint_path": NoneOr(PATH), "weights_file": NoneOr(PATH)})
def timm_model(name: str, pretrained: bool = False, checkpoint_path: str | os.PathLike | None = None,
               weights_file: str | os.PathLike | None = None, **kwargs: Any) -> nn.Module:
    """Any timm architecture by name, with weights only from local files (``HF_HUB_OFFLINE=1``).

    Parameters
    ----------
    name : str
        A timm model name, e.g. ``"vit_base_patch16_224"``.
    pretrained : bool
        Load timm's pretrained weights (from ``weights_file``, else the local Hugging Face cache).
    checkpoint_path : path, optional
        A state-dict checkpoint (``.pth``/``.safetensors``) loaded after construction.
    weights_file : path, optional
        Local file of the pretrained weights.
    **kwargs
        Passed to ``timm.create_model``.

    Returns
    -------
    torch.nn.Module
    """
    import timm

    # "hf-hub:..." and "local-dir:..." names are resolved by timm itself.
    if ":" not in name and not timm.is_model(name):
        raise invalid("name", "timm_model", "the name of a timm architecture (timm.list_models())", name)
    for arg, value in (("checkpoint_path", checkpoint_path), ("weights_file", weights_file)):
        if value is not None and not Path(value).is_file():
            raise invalid(arg, "timm_model", "an existing file", str(value))
    if weights_file is not None:
        if not pretrained:
            raise invalid("weights_file", "timm_model", "None when pretrained=False (the file would be ignored)",
                          str(weights_file))
        kwargs["pretrained_cfg_overlay"] = dict(file=str(weights_file))
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        model = timm.create_model(name, pretrained=pretrained, **kwargs)
    except LocalEntryNotFoundError:
        raise invalid("pretrained", "timm_model", "False, or True with weights_file= the local weights file (weights "
                      "are not downloaded: HF_HUB_OFFLINE=1)", pretrained,
                      f"the pretrained weights of {name!r} are not in the local Hugging Face cache") from None
    except RuntimeError as err:  # timm's load_state_dict on a file of another architecture
        if weights_file is None:
            raise
        raise invalid("weights_file", "timm_model", f"a weights file of the architecture {name!r}",
                      str(weights_file), _first_line(err)) from None
    if checkpoint_path:
        _load_state(model, checkpoint_path, name, "checkpoint_path", "timm_model")
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


def _first_line(err: Exception, limit: int = 300) -> str:
    text = str(err).strip().splitlines()
    return (text[0] if text else type(err).__name__)[:limit]


@validate_params({"model": MODULE, "path": PATH, "architecture": NoneOr(NAME)})
def load_checkpoint(model: nn.Module, path, architecture: str | None = None) -> nn.Module:
    """Load a state-dict checkpoint into ``model`` (strictly); an error names a file that does not fit.

    Parameters
    ----------
    model : torch.nn.Module
    path : str or pathlib.Path
        ``.pt``/``.pth`` or ``.safetensors``; a dict holding ``"state_dict"`` or ``"model"`` is unwrapped.
    architecture : str, optional
        Architecture named in the message (default the model's class name).

    Returns
    -------
    torch.nn.Module
        ``model``, with the weights loaded.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    """
    return _load_state(model, path, architecture or type(model).__name__, "path", "load_checkpoint")


def _load_state(model: nn.Module, path, architecture: str, arg: str, owner: str) -> nn.Module:
    """:func:`load_checkpoint`'s work; its errors name the argument ``arg`` of ``owner``."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"checkpoint not found: {path} (expected a state dict of {architecture})")
    try:
        if path.suffix == ".safetensors":
            from safetensors.torch import load_file

            state = load_file(str(path))
        else:
            state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # torch.load raises several kinds on a file that is not a checkpoint
        raise invalid(arg, owner, f"a state-dict checkpoint of {architecture}", str(path),
                      _first_line(err)) from None
    if isinstance(state, Mapping):
        for key in ("state_dict", "model"):
            if key in state and isinstance(state[key], Mapping):
                state = state[key]
    if not isinstance(state, Mapping):
        raise invalid(arg, owner, f"a state-dict checkpoint of {architecture}", str(path),
                      f"it holds a {type(state).__name__}")
    own = model.state_dict()
    missing = [k for k in own if k not in state]
    unexpected = [k for k in state if k not in own]
    shapes = [k for k in own if k in state and tuple(getattr(state[k], "shape", ())) != tuple(own[k].shape)]
    if missing or unexpected or shapes:
        parts = [f"{label} {', '.join(keys[:3])}{' ...' if len(keys) > 3 else ''}" for label, keys in
                 (("missing", missing), ("unexpected", unexpected), ("shape differs for", shapes)) if keys]
        raise invalid(arg, owner, f"a checkpoint of the architecture {architecture}", str(path),
                      f"it was made for another architecture: {'; '.join(parts)}")
    model.load_state_dict(state)
    return model


#: The configuration keys of each ``arch`` of :func:`build_model` (besides ``arch``).
CONFIG_KEYS = {
    "lenet5": ("in_chans", "num_classes", "img_size"),
    "repvgg": ("in_chans", "num_classes", "stem_chs", "widths", "depths", "strides"),
    "vit": ("img_size", "patch_size", "in_chans", "num_classes", "embed_dim", "depth", "num_heads", "mlp_ratio"),
}


@validate_params({"config": MAPPING})
def build_model(config: Mapping[str, Any]) -> nn.Module:
    """Build a model from a configuration dictionary.

    Parameters
    ----------
    config : mapping
        ``{"arch": a of ARCHS, ...}`` with the keys :data:`CONFIG_KEYS` ``[a]`` (any other is an error).

    Returns
    -------
    torch.nn.Module

    Examples
    --------
    >>> from gcc.dnn.models import build_model, n_parameters
    >>> n_parameters(build_model({"arch": "lenet5", "img_size": 28}))
    61706
    >>> build_model({"arch": "lenet5", "img_sise": 28})
    Traceback (most recent call last):
    ...
    gcc.validation.InvalidParameterError: The 'config' parameter of build_model must be a mapping whose keys are parameters of lenet5 (arch, in_chans, num_classes, img_size) (did you mean 'img_size'?). Got {'arch': 'lenet5', 'img_sise': 28} instead.
    """
    config = dict(config)
    arch = config.get("arch")
    if not isinstance(arch, str) or arch not in ARCHS:
        raise invalid("config", "build_model", f"a configuration whose 'arch' key is one of {list(ARCHS)}", arch)
    check_keys(config, ("arch",) + CONFIG_KEYS[arch], "config", "build_model", f"parameters of {arch}")
    config.pop("arch")
    return {"lenet5": LeNet5, "repvgg": repvgg, "vit": small_vit}[arch](**config)


@validate_params({"model": MODULE})
def n_parameters(model: nn.Module) -> int:
    """Number of parameters (those of a deployed model are detached, so every parameter counts)."""
    return int(sum(p.numel() for p in model.parameters()))
