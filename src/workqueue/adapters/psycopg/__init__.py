"""The sync producer: :class:`PsycopgWorkQueue`, a WorkQueue's enqueues on psycopg 3.

For code that cannot await: a Django or Flask view, a SQLAlchemy session, a
script. It sends the statements of ``adapters/postgres/sql/queue.sql``, the ones
:class:`~workqueue.adapters.postgres.PostgresWorkQueue` sends, with the same checks before
anything is sent and the same errors. Install it with the ``psycopg`` extra
(``pip install "workqueue-pg[psycopg]"``)::

    from django.db import connection, transaction

    with transaction.atomic():
        order = Order.objects.create(...)
        PsycopgWorkQueue(connection.connection, SystemClock()).enqueue(
            SendReceipt(order_id=order.id)
        )

Only this package imports psycopg (import-linter: ``psycopg-in-psycopg-adapter``).
"""

from __future__ import annotations

from workqueue.adapters.psycopg.items import item_from_row, read_item
from workqueue.adapters.psycopg.queue import PsycopgWorkQueue
from workqueue.adapters.psycopg.unavailable import enqueue_error, is_connection_loss

__all__ = ["PsycopgWorkQueue", "enqueue_error", "is_connection_loss", "item_from_row", "read_item"]
