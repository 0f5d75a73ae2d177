"""Opens a database with LangGraph's SqliteSaver and prints one thread as JSON.

Usage: read_thread.py DB THREAD_ID
"""

import sqlite3
import sys

from langgraph.checkpoint.sqlite import SqliteSaver

from common import dump, emit

db, thread_id = sys.argv[1], sys.argv[2]
conn = sqlite3.connect(db, check_same_thread=False)
emit(dump(SqliteSaver(conn), thread_id))
conn.close()
