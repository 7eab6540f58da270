import logging

logger = logging.getLogger("langgraph")
