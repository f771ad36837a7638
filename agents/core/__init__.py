"""The agents core: what every algorithm shares (Acme's split: config / networks / actor /
learning / builder). An algorithm is its config plus what differs; ``agents/README.md``
shows the parts, the loop and where to add an algorithm.

Modules, bottom up (no module imports one above it; ``tests/test_import_rules.py`` checks
that there is no import cycle in ``agents/``, ``TYPE_CHECKING`` imports included)::

    config       config groups (RunConfig, InteractConfig, ActorConfig, NetworkConfig,
                 SequenceConfig, OptimConfig, ReplayConfig, DiscountConfig, QLearningConfig,
                 DemoConfig, DemoReplayConfig, DemoMixConfig); an algorithm's config
                 inherits the groups it needs, each field declared once, the CLI flat
    preprocess   observations -> arrays, one function for live steps and demos
    sequences    SequenceWriter: episodes -> overlapping sequences with the stored LSTM state
                 and the policy's per-step extras; SequenceBatch, with_extras, take
    replay       prioritized sequence replay (sum tree); state arrays for --save-replay
    networks     RecurrentNetwork = torso (encoder + LSTM) + named heads from a NetworkSpec
                 (dueling_q | logits | distributional_q | value)
    batch        TorchBatch (time-major, with is_demo and extras), Sample, LossOutput,
                 LearnerView, Loss: the only types a loss needs
    losses       unroll (burn-in without gradient), n-step targets, value rescaling, the
                 learned-step mask, the large-margin term
    targets      HardCopy(every) | Polyak(tau)
    learner      Learner(networks, device, loss, target rules, optim): Adam, clip, targets,
                 priorities back when the loss gives them
    mixing       named DataSources (explicit demo flag) mixed per batch element
    policy       BatchPolicy (own network copy, weights by version) + selectors returning
                 (action, extras): EpsilonGreedy, SoftmaxSample
    controller   AgentController: reset / act / taken (take-over) for watch and recording
    actor        ActorPool protocol (step, update_weights, num_envs); VectorActor in process
    ray_pool     RayActorPool: the actors in Ray processes (--actor-procs), same protocol
    checkpoint   atomic writes, resume from the most env steps, previous format upgraded
    gate         DeployGate (--gate-episodes): which network evaluation, evaluate and
                 watch play; the learner's tests, their env steps and its checkpoint state
    context      RunContext, the run state hooks and schedules see, its Counters as fields
    demos        demo loading and checks; demo replay as a named demo source; demo_mix
    schedules    ReplayRatio | OnPolicy | Offline
    agent        Agent (the interface: abstract where every algorithm answers, neutral
                 defaults elsewhere; the hook order), EnvInfo, Phase
    wrapper      AgentWrapper: an agent around an agent (the coach's)
    run          the run shell: train(agent) -> TrainResult
    restore      any registered agent back from a checkpoint, as a controller

Writing an algorithm: subclass :class:`agents.core.agent.Agent` (see its docstring for
each method and the order of the calls) or the algorithm it extends, give it a config
composed from the groups, and add one line to :mod:`agents.registry`. ``demostudio train
NAME``, compare, evaluate, watch and resume then work for it.
"""
