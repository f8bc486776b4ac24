"""Partitions this broker leads or follows: appends with acks, high watermark, ISR, purgatory."""
