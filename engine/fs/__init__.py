"""The study's file system: a pass-through FUSE mount over ``OUT/study`` that knows what the study wrote and what it
made durable (contract §9).

The mount is served by a process of its own (:mod:`.server`), backed by the
same folder held open beneath it, so the study's files are where they always
were once it is unmounted; :mod:`.mount` starts and ends it and says when this
machine cannot (no ``/dev/fuse``, no libfuse 3).
"""
