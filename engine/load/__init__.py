"""What a study and its machine are doing: process trees, cgroup counters, container stats, and the study's own
load as rates."""
