"""The number-row network (torch): a small encoder to 1/32 with depthwise-separable blocks and a light
decoder back to 1/4 (nearest upsampling, added skips). Grey input [N,1,H,W] -> logits [N,1,H/4,W/4]."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def cbr(cin, cout, k=3, s=1, groups=1, dil=1):
    pad = (k // 2) * dil if isinstance(k, int) else tuple((kk // 2) * dil for kk in k)
    return nn.Sequential(nn.Conv2d(cin, cout, k, s, pad, dilation=dil, groups=groups, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class DS(nn.Module):
    """Depthwise k x k (stride, dilation) + pointwise, residual when shapes allow."""

    def __init__(self, cin, cout, s=1, dil=1, k=3):
        super().__init__()
        self.dw = cbr(cin, cin, k, s, groups=cin, dil=dil)
        self.pw = cbr(cin, cout, 1)
        self.res = s == 1 and cin == cout

    def forward(self, x):
        y = self.pw(self.dw(x))
        return x + y if self.res else y


class RowNet(nn.Module):
    def __init__(self, width: float = 1.0):
        super().__init__()
        c = [max(8, int(round(v * width / 8)) * 8) for v in (16, 32, 48, 64, 96)]
        self.stem = nn.Sequential(cbr(1, c[0], 3, 2), cbr(c[0], c[1], 3, 2))            # 1/4
        self.e4 = DS(c[1], c[1], k=(3, 5))
        self.e8 = nn.Sequential(DS(c[1], c[2], 2), DS(c[2], c[2], k=(3, 5)))             # 1/8
        self.e16 = nn.Sequential(DS(c[2], c[3], 2), DS(c[3], c[3], k=(3, 5)), DS(c[3], c[3], dil=2))  # 1/16
        self.e32 = nn.Sequential(DS(c[3], c[4], 2), DS(c[4], c[4], dil=2), DS(c[4], c[4], k=(3, 5)))  # 1/32
        self.l16 = cbr(c[4], c[3], 1)
        self.d16 = DS(c[3], c[3], k=(3, 5))
        self.l8 = cbr(c[3], c[2], 1)
        self.d8 = DS(c[2], c[2], k=(3, 5))
        self.l4 = cbr(c[2], c[1], 1)
        self.d4 = DS(c[1], c[1])
        self.head = nn.Conv2d(c[1], 1, 1)

    def forward(self, x):
        f4 = self.e4(self.stem(x))
        f8 = self.e8(f4)
        f16 = self.e16(f8)
        f32 = self.e32(f16)
        y = self.d16(f16 + F.interpolate(self.l16(f32), size=f16.shape[-2:], mode="nearest"))
        y = self.d8(f8 + F.interpolate(self.l8(y), size=f8.shape[-2:], mode="nearest"))
        y = self.d4(f4 + F.interpolate(self.l4(y), size=f4.shape[-2:], mode="nearest"))
        return self.head(y)


class Exported(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return torch.sigmoid(self.net(x))


def export(net: nn.Module, path, h: int, w: int) -> None:
    import onnx

    net.eval()
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(Exported(net).eval(), (torch.zeros(1, 1, h, w),), str(path), input_names=["x"],
                      output_names=["prob"], opset_version=17, dynamo=False)
    onnx.checker.check_model(onnx.load(str(path)))
