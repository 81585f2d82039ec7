public enum TokenizerModule {}
