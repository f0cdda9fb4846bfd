"""The model-diff room: a tab comparing two models, its changes list and pair details."""
