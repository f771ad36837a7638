"""The shared core of the learning-from-demonstration algorithms: preprocessing, recurrent
Q networks, sequence cutting, prioritized sequence replay, losses, learner, actors,
checkpoints, logging and the training loop."""
