public enum CaptureServerPlaceholder {}
