public enum CardCaptureModule {}
