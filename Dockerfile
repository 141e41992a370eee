# Runs the nasviz dashboard on its embedded default table.
#
#   docker build -t nasviz .
#   docker run -p 127.0.0.1:8501:8501 -v nasviz-runs:/var/lib/nasviz nasviz
#
# Safe defaults: an unprivileged user, server-side file paths off (no NASVIZ_DATA_DIR; mount a
# folder read-only and set it to offer one), the run store and uploads on a volume, the limits of
# nasviz/settings.py (README, "Serving it safely").
FROM python:3.11-slim

# An unprivileged user owns only the store's volume; the code stays root-owned and read-only to it.
RUN useradd --create-home --uid 10001 --shell /usr/sbin/nologin nasviz \
    && mkdir -p /var/lib/nasviz && chown nasviz:nasviz /var/lib/nasviz

WORKDIR /app
COPY requirements.txt pyproject.toml README.md ./
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
RUN pip install --no-cache-dir --no-deps -e .

# Runs, uploads and worker logs live beside the store, on the volume.
ENV NASVIZ_STORE=/var/lib/nasviz/nasviz.sqlite \
    HOME=/home/nasviz
VOLUME ["/var/lib/nasviz"]
USER nasviz

EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://localhost:8501/_stcore/health', timeout=4).status == 200 else 1)"]
# Inside a container the server must listen on all interfaces to be reachable from the host;
# publish the port on the host's loopback (-p 127.0.0.1:8501:8501) unless it is meant to be public.
CMD ["python", "-m", "nasviz.dashboard.serve", "--server.address=0.0.0.0", "--server.port=8501"]
