"""The engine: how a program's master is grown and solved, in one room.

* :mod:`~mmprog.engine.loop` — the cutting-plane loop, one round in named stages (separate → add → solve → bound →
  stop → record) and its :class:`~mmprog.engine.loop.Settings`;
* :mod:`~mmprog.engine.records` — the round records and what a route returns (:class:`EngineRun`), the gap;
* :mod:`~mmprog.engine.oracle` — the separation oracle and its back ends (serial, threads, processes, Dask); it
  makes the cuts of :mod:`mmprog.cuts` (the vocabulary engine and programs share, one room below the programs);
* :mod:`~mmprog.engine.masters` — the master back ends behind one interface, chosen by (the master's form, the
  solver) in one place: :mod:`~mmprog.engine.highs_native` and :mod:`~mmprog.engine.daqp_native` solve from the
  working set's arrays (native HiGHS LP/QP, DAQP Gram dual); any other pair goes through the Pyomo model
  (:meth:`mmprog.programs.base.Program.solve`);
* :mod:`~mmprog.engine.routes` — the engine as a program with an outer loop sees it (:data:`ENGINE`, handed to
  ``program.fit``), so that no program imports the engine;
* :mod:`~mmprog.engine.factored_lp`, :mod:`~mmprog.engine.subgradient` — the other routes to P1 (one factored LP;
  the sub-gradient method of P1′);
* :mod:`~mmprog.engine.checkpoint`, :mod:`~mmprog.engine.interrupts`, :mod:`~mmprog.engine.memory` — long runs:
  checkpoints, SIGINT/SIGTERM between rounds, freed memory given back, fresh memory committed as written.

Nothing here is imported by ``import mmprog``; the public face (:func:`mmprog.fit`, :class:`mmprog.result.Result`)
calls :func:`mmprog.engine.loop.run`.
"""
