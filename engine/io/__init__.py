"""The ground floor: time as the evidence writes it, files an adversary may have written, text as it may be shown.

Nothing here knows the contract: these modules read and write bytes, times
and text safely, wait on files without polling, and call into the event loop
from threads.  Every other room builds on them.
"""
