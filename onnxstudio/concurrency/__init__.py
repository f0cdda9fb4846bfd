"""The one room for work outside this thread: forks, child processes and GIL sharing.

Its contract, for every child it starts (``fork.Forked``, ``child.Child``, the layout's
workers in ``unit_pool``):

- a child dies with its parent: it watches a pipe only the parent holds open, and ends
  when that pipe closes (the parent exited, crashed or was killed, SIGKILL included);
- nobody waits forever: every wait for a child has a timeout, after which the child is
  killed and the caller gets its failure;
- temporary files do not outlive a kill: a child removes its job folder when its parent
  dies, and an export's file is written unnamed until it is complete
  (``export/atomic.py``);
- every caller has a path without fork that gives the same result, taken where there
  is no fork (Windows), where forking is unsafe (Qt loaded, threads running: macOS
  aborts such forks, and only the forking thread lives on in the child) or when
  ``ONNXSTUDIO_NO_FORK=1``.

``collector`` pauses the garbage collector around bulk building; ``gil_runs``
cuts bulk C work into runs so the GUI thread gets the GIL between them.
The package imports nothing else of onnxstudio.
"""
