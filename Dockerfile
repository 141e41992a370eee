# Runs the nasviz dashboard on its embedded default table.
FROM python:3.11-slim
WORKDIR /app
COPY requirements.txt pyproject.toml README.md ./
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
RUN pip install --no-cache-dir --no-deps -e .
EXPOSE 8501
# Inside a container the server must listen on all interfaces to be reachable from the host.
CMD ["python", "-m", "streamlit", "run", "app.py", "--server.address=0.0.0.0", "--server.port=8501"]
