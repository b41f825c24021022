# The work of one reference-study run.  POSIX sh and awk only, so it runs the
# same in the busybox image (whose awk has no math library: + - * / % only)
# and on a host shell.
#
#   sh -c "<this script>" refstudy SECONDS SAMPLES ID:PARAM:SEED ...
#
# For every experiment it estimates, by Monte Carlo over SAMPLES draws of a
# Park-Miller generator seeded with SEED, the mean of 2pu / (1 + (pu)^2) for
# u uniform in (0, 1) and p = PARAM (that is ln(1 + p^2) / p): a real loop
# whose value lies in [0, 0.81] for p >= 0, peaking near p = 2, and is
# negative, out of range, for p < 0.  An experiment whose PARAM is not a
# number gets no value.  The run then sleeps so that it lasts about SECONDS,
# and only at the very end prints one JSON object, experiment id -> value, on
# standard output: a run cut short has no output at all.

seconds=$1
samples=$2
shift 2

values=$(awk -v samples="$samples" 'BEGIN {
    m = 2147483647
    out = "{"
    sep = ""
    for (i = 1; i < ARGC; i++) {
        if (split(ARGV[i], f, ":") != 3) continue
        id = f[1]; p = f[2]; state = f[3] % (m - 1) + 1
        if (p !~ /^-?[0-9]+(\.[0-9]+)?$/) continue
        sum = 0
        for (k = 0; k < samples; k++) {
            # 16807 * state stays below 2^53, so the double arithmetic is exact.
            state = (16807 * state) % m
            x = p * (state / m)
            sum += 2 * x / (1 + x * x)
        }
        out = out sep sprintf("\"%s\": %.6f", id, sum / samples)
        sep = ", "
    }
    print out "}"
}' "$@") || exit 3

sleep "$seconds" || exit 4
printf '%s\n' "$values"
