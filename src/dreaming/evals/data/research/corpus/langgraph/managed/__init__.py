from langgraph.managed.is_last_step import IsLastStep, RemainingSteps

__all__ = ("IsLastStep", "RemainingSteps")
